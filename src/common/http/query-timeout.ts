import { HttpStatus } from '@nestjs/common';

/** MongoDB's error for a query stopped by its `maxTimeMS`. */
const MAX_TIME_MS_EXPIRED = 50;

/** When to try again: the time limit again, so the server has finished what it was busy with. */
export const QUERY_TIMEOUT_RETRY_AFTER_S = 5;

export const QUERY_TIMEOUT_ANSWER = {
  status: HttpStatus.SERVICE_UNAVAILABLE,
  error: 'The database took too long to answer; try again later',
};

/** A query the server stopped at its time limit (docs/operations/running-on-mongodb.md "Time limits"). */
export function isQueryTimeout(error: unknown): boolean {
  const { code, codeName } = (error ?? {}) as { code?: unknown; codeName?: unknown };
  return error instanceof Error && (code === MAX_TIME_MS_EXPIRED || codeName === 'MaxTimeMSExpired');
}
