import type { BulkWriteResult, Collection, Document } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';

/** One refused operation of a bulk write (or of an unordered insert): its index in the batch and its code. */
export interface WriteError {
  index: number;
  code?: number;
  errmsg?: string;
}

/**
 * What a failed bulk write tells about its operations (docs/operations/running-on-mongodb.md, "Bulk writes
 * and elections"):
 * - `refused`: the server answered and refused some operations one by one (`writeErrors`); every other
 *   operation of an unordered batch is written and acknowledged;
 * - `unknown`: the batch failed as a whole (a closed connection, a server-selection time-out in an
 *   election, `NotWritablePrimary`, a time limit) or its write concern failed (written on the primary but
 *   not acknowledged by a majority, so an election may roll it back): which operations are durable is
 *   unknown, and only a retry of the whole batch (safe when its writes are idempotent) settles it.
 * The driver reports both as a `MongoBulkWriteError`; the first with `writeErrors`, the second without.
 */
export type BulkWriteFailure =
  { kind: 'refused'; duplicates: Set<number>; others: WriteError[] } | { kind: 'unknown' };

/**
 * Classifies a bulk write's failure: an error thrown by `insertMany`/`bulkWrite`, or the answer of a raw
 * `insert`/`update` command (`{writeErrors, writeConcernError}`).
 */
export function classifyBulkWriteFailure(failure: unknown): BulkWriteFailure {
  if (typeof failure !== 'object' || failure === null) return { kind: 'unknown' };
  if (writeConcernFailed(failure)) return { kind: 'unknown' };
  const listed = (failure as { writeErrors?: unknown }).writeErrors;
  const errors = (Array.isArray(listed) ? listed : listed ? [listed] : []) as WriteError[];
  if (errors.length === 0) return { kind: 'unknown' };
  const duplicates = new Set<number>();
  const others: WriteError[] = [];
  for (const entry of errors) {
    if (isDuplicateKey(entry)) duplicates.add(entry.index);
    else others.push(entry);
  }
  return { kind: 'refused', duplicates, others };
}

/** A write-concern failure in a driver error (its bulk result) or in a raw command answer. */
function writeConcernFailed(failure: object): boolean {
  const { result, writeConcernError } = failure as {
    result?: { getWriteConcernError?: () => unknown };
    writeConcernError?: unknown;
  };
  return Boolean(writeConcernError ?? result?.getWriteConcernError?.());
}

/**
 * The indexes of a failed batch that were refused as duplicate keys (written before: a retry, another
 * writer), when that is all that went wrong; any other failure is thrown as it came, so the caller's batch
 * fails loudly instead of counting unwritten documents as written.
 */
export function duplicatesOf(error: unknown): Set<number> {
  const failure = classifyBulkWriteFailure(error);
  if (failure.kind === 'refused' && failure.others.length === 0) return failure.duplicates;
  throw error;
}

/** A driver collection or a Mongoose model: anything with the driver's `bulkWrite`. */
interface BulkWriter<Op> {
  bulkWrite(operations: Op[], options: BulkOptions): Promise<unknown>;
}

/** Unordered always (one refused operation must not stop the rest); Mongoose's `timestamps` passes on. */
type BulkOptions = { ordered: false; timestamps?: boolean };

/** The part of a bulk write's result callers read. */
export type BulkWritten = Pick<BulkWriteResult, 'modifiedCount' | 'upsertedIds'>;

/**
 * One unordered `bulkWrite` in which every operation must apply (updates, upserts by `_id`): no refusal is
 * expected, so any failure is thrown as it came, for the caller to retry or surface.
 */
export async function writeAll<Op>(
  target: BulkWriter<Op>,
  operations: Op[],
  options: Omit<BulkOptions, 'ordered'> = {},
): Promise<BulkWritten> {
  if (operations.length === 0) return { modifiedCount: 0, upsertedIds: {} };
  return (await target.bulkWrite(operations, { ...options, ordered: false })) as BulkWriteResult;
}

/**
 * One unordered `bulkWrite` where a duplicate key means "done before" (an upsert that raced another
 * writer on a unique key): returns the indexes refused as duplicates; any other failure is thrown.
 */
export async function writeKeepingDuplicates<Op>(
  target: BulkWriter<Op>,
  operations: Op[],
): Promise<Set<number>> {
  try {
    await writeAll(target, operations);
    return new Set();
  } catch (error) {
    return duplicatesOf(error);
  }
}

/**
 * One unordered insert where a duplicate key means "inserted before" (a retry, another writer): returns
 * the indexes refused as duplicates; any other failure is thrown, nothing counted as written.
 */
export async function insertKeepingDuplicates(
  collection: Collection<Document>,
  docs: Document[],
): Promise<Set<number>> {
  if (docs.length === 0) return new Set();
  try {
    await collection.insertMany(docs, { ordered: false });
    return new Set();
  } catch (error) {
    return duplicatesOf(error);
  }
}

/**
 * Inserts documents with fixed `_id`s (unordered) and returns the indexes of those inserted now: one
 * refused as a duplicate was written before, so the caller must not count it again. Documents refused for
 * another reason fail the batch after `onPartial` was told which documents did go in (the caller counts
 * those; a retry of the batch then finds them as duplicates). A failure of the whole batch (`unknown`) is
 * thrown without `onPartial`: nothing is known to be written.
 */
export async function insertedIndexes<T extends Document>(
  collection: Collection<Document>,
  docs: T[],
  onPartial?: (inserted: Set<number>) => Promise<void>,
): Promise<Set<number>> {
  const all = new Set(docs.map((_, i) => i));
  if (docs.length === 0) return all;
  try {
    await collection.insertMany(docs, { ordered: false });
    return all;
  } catch (error) {
    const failure = classifyBulkWriteFailure(error);
    if (failure.kind === 'unknown') throw error;
    for (const index of failure.duplicates) all.delete(index);
    for (const entry of failure.others) all.delete(entry.index);
    if (failure.others.length === 0) return all;
    await onPartial?.(all);
    throw error;
  }
}
