/** One refused operation of a bulk write (or of an unordered insert): its index in the batch and its code. */
export interface WriteError {
  index: number;
  code?: number;
}

/**
 * The per-operation refusals a bulk write's error carries (the driver gives one or a list), or none when the
 * error is not a bulk refusal (the database is unreachable, say: whether anything was written is unknown).
 */
export function writeErrorsOf(error: unknown): WriteError[] {
  const writeErrors = (error as { writeErrors?: unknown } | null)?.writeErrors;
  return (Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : []) as WriteError[];
}
