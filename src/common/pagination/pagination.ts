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
}

/**
 * One page of lean documents and the total count: two database round trips, run concurrently.
 * `_id` is appended to the sort so pages are stable when the sort key has ties.
 */
export async function findPage<T>(
  model: Model<T>,
  query: PageQuery<T>,
): Promise<{ items: T[]; pagination: Pagination }> {
  const { filter, sort, page, limit, projection } = query;
  const [items, total] = await Promise.all([
    model
      .find(filter, projection)
      .sort({ ...sort, _id: sort._id ?? -1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<T[]>()
      .exec(),
    model.countDocuments(filter).exec(),
  ]);
  return { items, pagination: paginationOf(page, limit, total) };
}
