import { MongoError, MongoNetworkError, MongoServerSelectionError } from 'mongodb';

/**
 * Server codes of a failure that says nothing about the write itself: an election, a shutdown, a lost
 * connection or an exceeded time limit (MongoDB's `ErrorCodes` of those names).
 */
const TRANSIENT_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/** Whether sending the same operation again may succeed: the connection or the primary went away. */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  if (!(error instanceof MongoError)) return false;
  return (
    error.hasErrorLabel('RetryableWriteError') ||
    error.hasErrorLabel('TransientTransactionError') ||
    TRANSIENT_CODES.has(Number(error.code))
  );
}

export interface RetryOptions {
  /** Tries in all, the first included. */
  attempts?: number;
  /** Wait before the second try; doubled before each later one. */
  delayMs?: number;
}

/**
 * Runs an idempotent piece of work again after a transient database failure. The driver retries a single
 * `updateOne`/`insertOne` once by itself, never an `updateMany`, `deleteMany`, a `bulkWrite` with several
 * documents or a cursor (docs/operations/running-on-mongodb.md "Elections"); work that is safe to repeat
 * (it sets the same values again, finds nothing left to do) is retried here instead of failing the caller.
 */
export async function retryTransient<T>(work: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 5;
  let delay = options.delayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !isTransientDatabaseError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay *= 2;
    }
  }
}
