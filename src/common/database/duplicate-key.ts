/** The server's code for a write that would break a unique index (E11000). */
export const DUPLICATE_KEY_CODE = 11000;

/** What a duplicate-key error carries besides its code: the violated index's fields, when the server says. */
export interface DuplicateKeyError {
  code: typeof DUPLICATE_KEY_CODE;
  keyPattern?: Record<string, unknown>;
}

/**
 * Whether an error is a unique-index violation: a driver or Mongoose error, or one entry of a bulk write's
 * `writeErrors`. Code that relies on a unique index instead of check-then-insert branches on this.
 */
export function isDuplicateKey<T>(error: T): error is T & DuplicateKeyError {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === DUPLICATE_KEY_CODE
  );
}
