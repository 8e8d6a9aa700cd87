import { stdSerializers } from 'pino';

/** An e-mail address inside free text: a local part, `@`, a dotted domain. */
const ADDRESS = /[^\s@<>()[\]"',;:]+@[^\s@<>()[\]"',;:]+\.[^\s@<>()[\]"',;:]+/g;
/** Our own Message-IDs (`<job id>@<sender domain>`) look like addresses but name a job, not a person. */
const MESSAGE_ID = /^[a-f\d]{24}@/;

/**
 * Free text with e-mail addresses replaced by `[address]`. Log lines name ids, never people (a log is out
 * of reach of a GDPR erasure); this catches the text we do not write ourselves: an SMTP server's reply
 * (`550 <jane@example.com>: no such user`), a database error quoting a duplicate key.
 */
export function withoutAddresses(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(ADDRESS, (found) => (MESSAGE_ID.test(found) ? found : '[address]'));
}

/** The error a pino call logs: `(error)` or `({ err: error, … })`. */
function errorOf(first: unknown): Error | undefined {
  if (first instanceof Error) return first;
  const err = (first as { err?: unknown } | null)?.err;
  return err instanceof Error ? err : undefined;
}

/**
 * A pino call's arguments with addresses taken out of its message strings. A call without a message takes
 * the error's as its message (pino does so after this hook): then the cleaned message is given instead.
 */
export function argsWithoutAddresses(args: unknown[]): unknown[] {
  if (args.length === 1) {
    const error = errorOf(args[0]);
    return error ? [args[0], withoutAddresses(error.message)] : args;
  }
  // Every request's access line passes here: no copy unless a string holds an `@`.
  let cleaned = args;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (typeof arg === 'string' && arg.includes('@')) {
      if (cleaned === args) cleaned = [...args];
      cleaned[i] = withoutAddresses(arg);
    }
  }
  return cleaned;
}

/** pino's error serializer, with addresses taken out of the message and the stack. */
export function errWithoutAddresses(error: Error): ReturnType<typeof stdSerializers.err> {
  const serialized = stdSerializers.err(error);
  if (typeof serialized.message === 'string') serialized.message = withoutAddresses(serialized.message);
  if (typeof serialized.stack === 'string') serialized.stack = withoutAddresses(serialized.stack);
  return serialized;
}
