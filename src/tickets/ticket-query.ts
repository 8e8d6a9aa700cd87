import { containsText } from '../common/database/text-pattern';
import { BadRequestException } from '@nestjs/common';
import { type QueryFilter, type SortOrder, trusted } from 'mongoose';
import { validObjectIdOr404 } from '../common/database/object-id';
import type { ListAppTicketsQuery, TicketSortField } from './dto/ticket-input.dto';
import type { Ticket } from './schemas/ticket.schema';

export const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A createdAt range: `from` inclusive, `to` exclusive; either may be open. */
export interface TimeRange {
  from?: Date;
  to?: Date;
}

function parseBound(field: string, value: string, edge: 'start' | 'end'): Date {
  const dateOnly = DATE_ONLY.test(value);
  const instant = new Date(dateOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(instant.getTime()))
    throw new BadRequestException(`${field} must be a valid ISO 8601 date`);
  if (edge === 'start') return instant;
  // A date-only end includes that whole UTC day; a date-time end includes that instant.
  return new Date(instant.getTime() + (dateOnly ? DAY_MS : 1));
}

/** `startDate`/`endDate` as a half-open range; 400 when the start comes after the end. */
export function parseTimeRange(startDate?: string, endDate?: string): TimeRange {
  const from = startDate === undefined ? undefined : parseBound('startDate', startDate, 'start');
  const to = endDate === undefined ? undefined : parseBound('endDate', endDate, 'end');
  if (from && to && from >= to) throw new BadRequestException('startDate must not be after endDate');
  return { from, to };
}

export function createdAtCondition({ from, to }: TimeRange): QueryFilter<Ticket>['createdAt'] | undefined {
  if (!from && !to) return undefined;
  return trusted({ ...(from ? { $gte: from } : {}), ...(to ? { $lt: to } : {}) });
}

/** The filter of both list families; `appId` comes from the path (app family) or the query (global). */
export function ticketListFilter(query: ListAppTicketsQuery, appId?: string): QueryFilter<Ticket> {
  const filter: QueryFilter<Ticket> = {};
  if (appId !== undefined) filter.appId = appId;
  if (query.status) filter.status = query.status;
  if (query.topic) filter.topic = query.topic;
  if (query.priority) filter.priority = query.priority;
  if (query.shopId) filter.shopId = query.shopId;
  if (query.email) filter.email = query.email;
  const createdAt = createdAtCondition(parseTimeRange(query.startDate, query.endDate));
  if (createdAt) filter.createdAt = createdAt;
  if (query.search) {
    // No $text on every deployment: an escaped, length-capped, case-insensitive substring match.
    const pattern = containsText(query.search);
    filter.$or = [{ subject: pattern }, { message: pattern }, { email: pattern }];
  }
  return filter;
}

/**
 * The filters of the list; across apps each of status, topic, priority and email leads an index of its own.
 */
const FILTERS = ['status', 'topic', 'priority', 'email', 'shopId', 'startDate', 'endDate', 'search'] as const;

/**
 * What the list across apps (`GET /tickets` without `appId`) can read in index order, whatever the number
 * of tickets (docs/api/staff.md "Tickets"): a filter comes with the default sort (`{<filter>, createdAt}`
 * indexes), another sort comes without filters (`{<sort key>, _id}` indexes), and a shop is one app's.
 * Anything else would sort every app's matching tickets in memory: a 400 naming the field.
 */
export function assertServedAcrossApps(query: ListAppTicketsQuery): void {
  if (query.shopId !== undefined) {
    throw new BadRequestException('shopId needs appId: a shop belongs to one app');
  }
  const filtered = FILTERS.filter((field) => query[field] !== undefined);
  if (query.sortBy !== 'createdAt' && filtered.length) {
    throw new BadRequestException(
      `sortBy ${query.sortBy} across apps takes no filter (${filtered.join(', ')} given): ` +
        'give appId, or sort by createdAt',
    );
  }
}

const SORT_KEYS: Record<TicketSortField, keyof Ticket> = {
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  subject: 'subject',
  priority: 'priorityRank',
  status: 'statusRank',
};

/** Ties break on `_id` in the same direction, so one index serves both sort orders. */
export function ticketListSort(
  sortBy: TicketSortField,
  sortOrder: 'asc' | 'desc',
): Record<string, SortOrder> {
  const direction = sortOrder === 'asc' ? 1 : -1;
  return { [SORT_KEYS[sortBy]]: direction, _id: direction };
}

/** The lookup filter of one ticket; a malformed id is 404 like an unknown one. */
export function ticketIdFilter(id: string, appId?: string): QueryFilter<Ticket> {
  const _id = validObjectIdOr404(id, 'Ticket not found');
  return appId === undefined ? { _id } : { _id, appId };
}
