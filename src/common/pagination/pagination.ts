import type { QueryFilter, Model, SortOrder } from 'mongoose';
import type { Pagination } from '../http/envelope';
import { IntegerQuery } from '../validation/integer-query.decorator';

export const MAX_PAGE_SIZE = 100;

/** `sortOrder` values of every sortable list. */
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrderName = (typeof SORT_ORDERS)[number];

/** Pages past this are refused: a deeper page is a skip over a million records, and nobody reads them. */
export const MAX_PAGE = 10_000;

/** `page` 1..10,000 (default 1) and `limit` 1..100 (default 20); anything else is a 400 naming the field. */
export class PaginationQueryDto {
  @IntegerQuery({ min: 1, max: MAX_PAGE, default: 1 })
  page: number = 1;

  @IntegerQuery({ min: 1, max: MAX_PAGE_SIZE, default: 20 })
  limit: number = 20;
}

export function paginationOf(page: number, limit: number, total: number): Pagination {
  return { page, limit, total, pages: Math.ceil(total / limit) };
}

export interface PageQuery<T> {
  filter: QueryFilter<T>;
  sort: Record<string, SortOrder>;
  page: number;
  limit: number;
  projection?: Record<string, 0 | 1>;
  /**
   * The sort's fields are unique within the filter (a unique index's fields), so no tie-breaker is added
   * and that index serves the sort as it is.
   */
  uniqueSort?: boolean;
}

/** The direction of a sort's last key: `_id` follows it, so one index serves the sort and its reverse. */
function lastDirection(sort: Record<string, SortOrder>): 1 | -1 {
  const last = Object.values(sort).at(-1);
  return last === 1 || last === 'asc' || last === 'ascending' ? 1 : -1;
}

/**
 * One page of lean documents and the total count: two database round trips, run concurrently.
 * `_id` is appended to the sort so pages are stable when the sort key has ties; the list's indexes end with
 * it (docs/operations/index-coverage.md), so a page is read in index order, never sorted in memory. `total` is exact
 * for a filtered list (counted on the same index); for an unfiltered one it is the collection's count from
 * its metadata, which skips a scan of every document (exact on a cleanly running server).
 */
export async function findPage<T>(
  model: Model<T>,
  query: PageQuery<T>,
): Promise<{ items: T[]; pagination: Pagination }> {
  const { filter, sort, page, limit, projection, uniqueSort } = query;
  const unfiltered = Object.keys(filter).length === 0;
  const stableSort = uniqueSort ? sort : { ...sort, _id: sort._id ?? lastDirection(sort) };
  const [items, total] = await Promise.all([
    model
      .find(filter, projection)
      .sort(stableSort)
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<T[]>()
      .exec(),
    unfiltered ? model.estimatedDocumentCount().exec() : model.countDocuments(filter).exec(),
  ]);
  return { items, pagination: paginationOf(page, limit, total) };
}
