import { MongoBulkWriteError, MongoError, MongoNetworkError, MongoServerSelectionError } from 'mongodb';
import { classifyBulkWriteFailure } from './bulk-writes';

/**
 * Server codes of a node that cannot take the write now but will soon (the retryable-writes set of the
 * MongoDB specifications): host unreachable or not found, network timeout, shutdown, stepped down, socket
 * error, not (writable) primary, interrupted by a replica-set change, time limit.
 */
const TRANSIENT_CODES = new Set([6, 7, 89, 91, 189, 9001, 10107, 11600, 11602, 13435, 13436, 262, 134]);

/** An error that a later attempt of the same operation can get past: the network, an election, a restart. */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  if (!(error instanceof MongoError)) return false;
  // A bulk write the driver lost as a whole (a closed connection: no server code, no write errors) is
  // reported as a MongoBulkWriteError that no longer says it was a network error.
  if (error instanceof MongoBulkWriteError && error.code === undefined) {
    return classifyBulkWriteFailure(error).kind === 'unknown';
  }
  if (error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError')) {
    return true;
  }
  const code = Number(
    error.code ??
      (error as { result?: { writeConcernError?: { code?: unknown } } }).result?.writeConcernError?.code,
  );
  return TRANSIENT_CODES.has(code);
}

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the second attempt; doubled before each later one (with jitter), up to `maxMs`. */
  baseMs: number;
  maxMs: number;
}

/** About 30 s of tries: longer than a replica-set election, short enough for the caller to carry on. */
export const WRITE_RETRY: RetryPolicy = { attempts: 8, baseMs: 200, maxMs: 10_000 };

/**
 * `work()`, tried again after a transient database error as `policy` says; other errors are thrown at once.
 */
export async function retryTransient<T>(
  work: () => Promise<T>,
  policy: RetryPolicy = WRITE_RETRY,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= policy.attempts || !isTransientDatabaseError(error)) throw error;
      const wait = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, wait / 2 + Math.random() * (wait / 2)));
    }
  }
}
