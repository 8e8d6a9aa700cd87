/**
 * A start-up failure the operator can act on, whose message says everything (the variable or the cause, and
 * what to do) in one line. main.ts and worker.ts print it once as the fatal line; the boot logger drops
 * Nest's own copy of it (ExceptionHandler logs every error thrown while modules are created, stack included).
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}
