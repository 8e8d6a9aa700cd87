import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandStartedEvent } from 'mongodb';
import type { Connection } from 'mongoose';
import { connectionObservers } from '../../src/database/connection-observers';
import { declaredIndexes } from '../../src/database/index-plan';
import type { CoverageIndex } from './index-coverage';
import { describeShape, shapesOfCommand } from './query-shape';
import { QUERY_SHAPES_DIR_VARIABLE, type QueryShapeRecord, RECORDING_SUFFIX } from './query-shape-records';

/**
 * Records the shape of every query this process sends, for the index-coverage gate of the test run
 * (docs/operations/index-coverage.md). Only active when QUERY_SHAPES_DIR is set, which only the tests do.
 */

const applicationScope = new AsyncLocalStorage<true>();
let onlyInApplicationScope = false;

/**
 * In a Jest worker the test's own reads and writes (assertions, seeded documents) share the application's
 * connection; from here on only commands sent inside `inApplicationScope` are recorded.
 */
export function recordOnlyInApplicationScope(): void {
  onlyInApplicationScope = true;
}

const isLazyThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | undefined)?.then === 'function' && !(value instanceof Promise);

/** Runs application work (a request, a service call, start-up) so the queries it sends are recorded. */
export function inApplicationScope<T>(work: () => T): T {
  return applicationScope.run(true, () => {
    const result = work();
    // An injected request or a Mongoose query starts only when awaited: start it here, inside the scope.
    return (isLazyThenable(result) ? Promise.resolve(result) : result) as T;
  });
}

/** One file per process and module instance: no two writers append to the same file. */
let file: string | undefined;
const recorded = new Set<string>();
const collectionsWritten = new Set<string>();
/** Per collection, the fields its partial indexes' filters name: their equality values are kept. */
const literalFields = new Map<string, Set<string>>();

/** The field names a partial filter expression compares (through `$and`). */
function filterFields(filter: Record<string, unknown>, into: Set<string>): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      for (const clause of condition) filterFields(clause as Record<string, unknown>, into);
    } else if (!key.startsWith('$')) into.add(key);
  }
}

function write(dir: string, record: QueryShapeRecord): void {
  file ??= join(dir, `${process.pid}-${randomBytes(4).toString('hex')}${RECORDING_SUFFIX}`);
  // Written at once, line by line: a test that kills this process loses nothing recorded before.
  appendFileSync(file, `${JSON.stringify(record)}\n`);
}

/** Each collection's declared indexes, once; models register after the connection opens, so checked often. */
function writeNewCollections(connection: Connection, dir: string): void {
  for (const modelName of Object.keys(connection.models)) {
    const collection = connection.models[modelName].collection.collectionName;
    if (collectionsWritten.has(collection)) continue;
    collectionsWritten.add(collection);
    const indexes = declaredIndexes(connection, modelName).map(({ key, options }): CoverageIndex => {
      const partialFilter = options.partialFilterExpression as Record<string, unknown> | undefined;
      return {
        collection,
        key: Object.entries(key).map(([field, direction]) => [field, Number(direction)]),
        unique: Boolean(options.unique),
        sparse: Boolean(options.sparse),
        ...(partialFilter ? { partialFilter } : {}),
        ttl: options.expireAfterSeconds !== undefined,
      };
    });
    const fields = new Set<string>();
    for (const { partialFilter } of indexes) if (partialFilter) filterFields(partialFilter, fields);
    literalFields.set(collection, fields);
    write(dir, { collection, indexes });
  }
}

function recordQueryShapes(connection: Connection, dir: string): void {
  mkdirSync(dir, { recursive: true });
  connection.getClient().on('commandStarted', (event: CommandStartedEvent) => {
    if (onlyInApplicationScope && !applicationScope.getStore()) return;
    writeNewCollections(connection, dir);
    for (const shape of shapesOfCommand(event.commandName, event.command, (name) =>
      literalFields.get(name),
    )) {
      const key = describeShape(shape);
      if (recorded.has(key)) continue;
      recorded.add(key);
      write(dir, { shape });
    }
  });
}

/**
 * Records the queries of every database connection this process opens from now on, when QUERY_SHAPES_DIR is
 * set: in a Jest worker (test/setup/test-env.ts) and in the processes tests start (preload.js).
 */
export function registerQueryShapeRecorder(): void {
  const dir = process.env[QUERY_SHAPES_DIR_VARIABLE];
  if (dir) connectionObservers().push((connection) => recordQueryShapes(connection, dir));
}
