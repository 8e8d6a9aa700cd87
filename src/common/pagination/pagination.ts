import { BadRequestException } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import type { QueryFilter, Model, PipelineStage, SortOrder } from 'mongoose';
import type { Pagination } from '../http/envelope';
import { cappedCount, COUNT_LIMIT } from '../stats/capped-count';
import { IntegerQuery } from '../validation/integer-query.decorator';
import { afterCursor, CURSOR_MAX_LENGTH, cursorAfter } from './page-cursor';

export const MAX_PAGE_SIZE = 100;

/** `sortOrder` values of every sortable list. */
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrderName = (typeof SORT_ORDERS)[number];

/** The largest `page` the parameter takes; with `limit`, MAX_SKIP bounds it further. */
export const MAX_PAGE = 10_000;

/**
 * Records a page may skip (with COUNT_CAP, the matches a total counts): the bound on what one list request
 * reads, whatever the collection's size (docs/api/README.md "Paging"). Past it, lists continue by cursor.
 */
export const MAX_SKIP = 10_000;

/** `page` 1..10,000 (default 1) and `limit` 1..100 (default 20); anything else is a 400 naming the field. */
export class PageQueryDto {
  @IntegerQuery({ min: 1, max: MAX_PAGE, default: 1 })
  page: number = 1;

  @IntegerQuery({ min: 1, max: MAX_PAGE_SIZE, default: 20 })
  limit: number = 20;
}

/** A list paged by `findPage`: page numbers up to MAX_SKIP records deep, then a keyset cursor. */
export class PaginationQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    maxLength: CURSOR_MAX_LENGTH,
    description:
      '`pagination.next` of the page read before: the list continues after its last record (any depth); ' +
      '`page`, `total` and `pages` then count from there',
  })
  @IsOptional()
  @IsString()
  @MaxLength(CURSOR_MAX_LENGTH)
  @Matches(/^[\w-]+$/, { message: 'after must be the pagination.next value of an earlier page' })
  after?: string;
}

/** The deepest `page` for `limit`: its skip is at most MAX_SKIP. */
export const lastReachablePage = (limit: number) => Math.min(MAX_PAGE, Math.floor(MAX_SKIP / limit) + 1);

export function paginationOf(page: number, limit: number, total: number): Pagination {
  return { page, limit, total, pages: Math.ceil(total / limit), totalCapped: false, next: null };
}

export interface PageQuery<T> {
  filter: QueryFilter<T>;
  sort: Record<string, SortOrder>;
  page: number;
  limit: number;
  /** `pagination.next` of an earlier page: continue after it. */
  after?: string;
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

function checkDepth(page: number, limit: number): void {
  const deepest = lastReachablePage(limit);
  if (page <= deepest) return;
  throw new BadRequestException(
    `page must be at most ${deepest} with limit ${limit} (a page skips at most ${MAX_SKIP} records): ` +
      'continue with after=<pagination.next of the last page read>',
  );
}

/** The total, counted up to COUNT_CAP matches: past it the answer says so instead of counting on. */
async function cappedTotal<T>(model: Model<T>, filter: QueryFilter<T>) {
  const { count, capped } = cappedCount(await model.countDocuments(filter, { limit: COUNT_LIMIT }).exec());
  return { total: count, totalCapped: capped };
}

/**
 * One page of lean documents, its total and the cursor after it: two database round trips, run concurrently,
 * each bounded whatever the collection's size: the page skips at most MAX_SKIP records (deeper: 400 naming
 * `page`, or a cursor) and the count stops after COUNT_CAP matches. `_id` is appended to the sort so pages
 * are stable when the sort key has ties; the list's indexes end with it (docs/operations/index-coverage.md),
 * so a page is read in index order, never sorted in memory. An unfiltered list's total is the collection's
 * count from its metadata (no scan, exact on a cleanly running server).
 */
export async function findPage<T>(
  model: Model<T>,
  query: PageQuery<T>,
): Promise<{ items: T[]; pagination: Pagination }> {
  const { page, limit, projection } = query;
  const { stableSort, filter } = pageSelection(query);
  const unfiltered = Object.keys(filter).length === 0;
  const [found, counted] = await Promise.all([
    model
      .find(filter, projection)
      .sort(stableSort)
      .skip((page - 1) * limit)
      // One more than the page: whether a next page exists, without another query.
      .limit(limit + 1)
      .lean<T[]>()
      .exec(),
    unfiltered
      ? model
          .estimatedDocumentCount()
          .exec()
          .then((total) => ({ total, totalCapped: false }))
      : cappedTotal(model, filter),
  ]);
  return pageOf(found, counted, query, stableSort);
}

/**
 * `findPage` in one command: one aggregation whose `$facet` reads the page (each document then goes through
 * `pageStages`, e.g. a `$lookup` of the caller's own records) and the capped total together, after
 * `query.projection`. The same bounds as `findPage` (skip, cursor, COUNT_CAP); on MongoDB the total fetches
 * up to COUNT_LIMIT documents instead of counting index keys, which is the price of the round trip it saves
 * (docs/decisions/data-one-command-client-reads.md).
 */
export async function aggregatePage<T, D = T>(
  model: Model<D>,
  query: PageQuery<D>,
  pageStages: PipelineStage.FacetPipelineStage[] = [],
): Promise<{ items: T[]; pagination: Pagination }> {
  const { page, limit } = query;
  const { stableSort, filter } = pageSelection(query);
  const skip = (page - 1) * limit;
  const [result] = await model
    .aggregate<{ items: T[]; total: { n: number }[] }>([
      { $match: filter },
      {
        $sort: Object.fromEntries(
          Object.entries(stableSort).map(([key]) => [key, direction(stableSort, key)]),
        ),
      },
      // Before `$facet`, so neither branch holds what the list does not show (a ticket's thread, say).
      ...(query.projection ? [{ $project: query.projection }] : []),
      {
        $facet: {
          items: [...(skip > 0 ? [{ $skip: skip }] : []), { $limit: limit + 1 }, ...pageStages],
          total: [{ $limit: COUNT_LIMIT }, { $count: 'n' }],
        },
      },
    ])
    .exec();
  const { count, capped } = cappedCount(result?.total[0]?.n ?? 0);
  return pageOf(result?.items ?? [], { total: count, totalCapped: capped }, query, stableSort);
}

/** The sort with `_id` as its tie-breaker, and the filter with the cursor's condition. */
function pageSelection<T>(query: PageQuery<T>) {
  const { sort, page, limit, uniqueSort, after } = query;
  checkDepth(page, limit);
  const stableSort: Record<string, SortOrder> = uniqueSort
    ? sort
    : { ...sort, _id: sort._id ?? lastDirection(sort) };
  const filter: QueryFilter<T> = after
    ? { $and: [query.filter, afterCursor(after, stableSort)] }
    : query.filter;
  return { stableSort, filter };
}

function direction(sort: Record<string, SortOrder>, key: string): 1 | -1 {
  const order = sort[key];
  return order === 1 || order === 'asc' || order === 'ascending' ? 1 : -1;
}

/** The page read with one document more than `limit`, as answered: its items, total and next cursor. */
function pageOf<T>(
  found: T[],
  counted: { total: number; totalCapped: boolean },
  { page, limit }: Pick<PageQuery<T>, 'page' | 'limit'>,
  stableSort: Record<string, SortOrder>,
): { items: T[]; pagination: Pagination } {
  const items = found.slice(0, limit);
  const last = items.at(-1) as Record<string, unknown> | undefined;
  const next = found.length > limit && last ? cursorAfter(last, stableSort) : null;
  const { total, totalCapped } = counted;
  return { items, pagination: { page, limit, total, pages: Math.ceil(total / limit), totalCapped, next } };
}
