import { BadRequestException } from '@nestjs/common';
import { BSON } from 'mongodb';
import { type SortOrder, trusted } from 'mongoose';

/** Longest `after` value accepted: a cursor holds a few sort values (a subject is at most 200 characters). */
export const CURSOR_MAX_LENGTH = 1_000;

/** The values a sort key may hold; anything else in a cursor was not made by `cursorAfter`. */
type KeyValue = string | number | boolean | Date | BSON.ObjectId | null;

/**
 * What a cursor carries: the sort's field names (a cursor of another sort is refused) and the last values.
 */
interface CursorBody {
  k: string[];
  v: KeyValue[];
}

const INVALID = 'after must be the pagination.next value of an earlier page of this list, with the same sort';

const isKeyValue = (value: unknown): value is KeyValue =>
  value === null ||
  ['string', 'number', 'boolean'].includes(typeof value) ||
  value instanceof Date ||
  value instanceof BSON.ObjectId;

function valueAt(document: Record<string, unknown>, path: string): KeyValue {
  let value: unknown = document;
  for (const part of path.split('.')) value = (value as Record<string, unknown> | null)?.[part];
  return isKeyValue(value) ? value : null;
}

/**
 * The opaque `next` cursor after `last`: its sort values in canonical Extended JSON (dates and ObjectIds keep
 * their types), base64url-encoded. Opaque to clients, not secret: it holds only what the page showed.
 */
export function cursorAfter(last: Record<string, unknown>, sort: Record<string, SortOrder>): string {
  const keys = Object.keys(sort);
  const body: CursorBody = { k: keys, v: keys.map((key) => valueAt(last, key)) };
  return Buffer.from(BSON.EJSON.stringify(body, { relaxed: false })).toString('base64url');
}

function decode(cursor: string, keys: string[]): KeyValue[] {
  let body: unknown;
  try {
    body = BSON.EJSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'), { relaxed: true });
  } catch {
    throw new BadRequestException(INVALID);
  }
  const { k, v } = (body ?? {}) as Partial<CursorBody>;
  const sameSort = Array.isArray(k) && k.length === keys.length && k.every((key, i) => key === keys[i]);
  if (!sameSort || !Array.isArray(v) || v.length !== keys.length || !v.every(isKeyValue)) {
    throw new BadRequestException(INVALID);
  }
  return v;
}

const ascending = (order: SortOrder) => order === 1 || order === 'asc' || order === 'ascending';

/**
 * What comes after `value` in one key's order. Missing and null sort lowest: after null, ascending, comes
 * every non-null value; descending, nothing (so the caller drops the branch). Descending from a value also
 * reaches the nulls at the end; `_id` is never null.
 */
function beyond(key: string, order: SortOrder, value: KeyValue): Record<string, unknown>[] {
  if (value === null) return ascending(order) ? [{ [key]: trusted({ $ne: null }) }] : [];
  if (ascending(order)) return [{ [key]: trusted({ $gt: value }) }];
  const below = { [key]: trusted({ $lt: value }) };
  return key === '_id' ? [below] : [below, { [key]: null }];
}

/**
 * The keyset condition "after the cursor" in the sort's order: for each key, the earlier keys equal and this
 * one beyond. Each branch is an equality prefix of the list's index followed by a range on the next key, so
 * the page is read in index order from the cursor on, however deep it is (docs/api/README.md "Paging").
 */
export function afterCursor(cursor: string, sort: Record<string, SortOrder>): Record<string, unknown> {
  const keys = Object.keys(sort);
  const values = decode(cursor, keys);
  const branches: Record<string, unknown>[] = [];
  keys.forEach((key, i) => {
    const equal = Object.fromEntries(keys.slice(0, i).map((earlier, j) => [earlier, values[j]]));
    for (const condition of beyond(key, sort[key], values[i])) branches.push({ ...equal, ...condition });
  });
  // Only possible for a cursor on a single descending key that was null: nothing comes after it.
  if (!branches.length) return { _id: trusted({ $in: [] }) };
  return { $or: branches };
}
