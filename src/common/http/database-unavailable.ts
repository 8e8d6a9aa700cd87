/**
 * Driver errors that mean the database is away (not that the request or the data is wrong): no writable
 * server within the selection limit, a connection lost or refused, a pool cleared after a failed check.
 * Matched by name, which the driver and Mongoose keep stable, so a second copy of the driver in the tree
 * would be recognised too.
 */
const UNAVAILABLE = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError',
  'MongoNotConnectedError',
]);

/** What a client is told to wait before trying again while the database is away, in seconds. */
export const DATABASE_RETRY_AFTER_S = 5;

export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; try again shortly';

export function isDatabaseUnavailable(exception: unknown): exception is Error {
  return exception instanceof Error && UNAVAILABLE.has(exception.name);
}
