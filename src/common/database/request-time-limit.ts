import { AsyncLocalStorage } from 'node:async_hooks';
import type { Aggregate, MongooseQueryMiddleware, Query, Schema } from 'mongoose';

/**
 * How long the server may spend on one query sent while answering a request: past it MongoDB stops the
 * query itself (`MaxTimeMSExpired`) and the request answers 503 (docs/operations/running-on-mongodb.md
 * "Time limits"), instead of the query running on after the client gave up.
 */
export const REQUEST_QUERY_MAX_TIME_MS = 5_000;

/** Marks work done for an HTTP request; background work (workers, the planner, timers) runs outside it. */
const requestScope = new AsyncLocalStorage<true>();

/** Runs `work` (the rest of a request's hooks and its handler) inside the request scope. */
export function inRequestScope<T>(work: () => T): T {
  return requestScope.run(true, work);
}

const inRequest = () => requestScope.getStore() === true;

/** The query operations that take `maxTimeMS`; plain updates and inserts take none. */
const LIMITED_QUERIES: MongooseQueryMiddleware[] = [
  'find',
  'findOne',
  'countDocuments',
  'estimatedDocumentCount',
  'distinct',
  'findOneAndUpdate',
  'findOneAndDelete',
  'findOneAndReplace',
];

/**
 * A Mongoose plugin: every query and aggregation a request sends carries `maxTimeMS` (unless the code set
 * its own). Worker and planner queries are left without one: they are index-bound batches that a slow
 * moment should delay, not fail.
 */
export function requestTimeLimit(schema: Schema): void {
  schema.pre(LIMITED_QUERIES, function (this: Query<unknown, unknown>) {
    if (inRequest() && this.getOptions().maxTimeMS === undefined) this.maxTimeMS(REQUEST_QUERY_MAX_TIME_MS);
  });
  schema.pre('aggregate', function (this: Aggregate<unknown>) {
    if (inRequest() && this.options.maxTimeMS === undefined)
      this.option({ maxTimeMS: REQUEST_QUERY_MAX_TIME_MS });
  });
}
