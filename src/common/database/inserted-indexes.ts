import type { Collection, Document } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { writeErrorsOf } from './write-errors';

/**
 * Inserts documents with fixed `_id`s (unordered) and returns the indexes of those that were inserted now:
 * a document refused as a duplicate was written before (a retry, another writer), so the caller must not
 * count it again. An error other than duplicates is thrown, after `onPartial` was told which documents did
 * go in (the caller counts those; a retry of the batch then finds them as duplicates).
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
    const errors = writeErrorsOf(error);
    // Not a bulk refusal (the database is unreachable, say): whether anything went in is unknown.
    if (errors.length === 0) throw error;
    for (const entry of errors) all.delete(entry.index);
    if (errors.every((entry) => isDuplicateKey(entry))) return all;
    await onPartial?.(all);
    throw error;
  }
}
