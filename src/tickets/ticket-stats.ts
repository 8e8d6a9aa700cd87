import { BadRequestException } from '@nestjs/common';
import type { DailyCountView, TicketActivityView, TicketStatsView } from './dto/ticket.dto';
import { DAY_MS, parseTimeRange } from './ticket-query';
import {
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  TICKET_TOPICS,
  type TicketPriority,
  type TicketStatus,
} from './schemas/ticket.schema';

export const DEFAULT_STATS_DAYS = 30;
export const MAX_STATS_DAYS = 366;

export interface StatsRange {
  from: Date;
  /** Exclusive. */
  to: Date;
  /** Every UTC day the range touches, `YYYY-MM-DD`, oldest first. */
  days: string[];
}

const dayOf = (instant: Date) => instant.toISOString().slice(0, 10);
const startOfUtcDay = (instant: Date) => new Date(`${dayOf(instant)}T00:00:00.000Z`);

/** The UTC days from the day of `from` to the day of the last instant before `to`. */
export function utcDays(from: Date, to: Date): string[] {
  const days: string[] = [];
  const last = startOfUtcDay(new Date(to.getTime() - 1)).getTime();
  for (let day = startOfUtcDay(from).getTime(); day <= last; day += DAY_MS) days.push(dayOf(new Date(day)));
  return days;
}

/**
 * The statistics range: by default the last 30 UTC days up to the end of today; with only one bound, 30
 * days from or to it. More than 366 days is a 400.
 */
export function statsRange(startDate?: string, endDate?: string, now = new Date()): StatsRange {
  const parsed = parseTimeRange(startDate, endDate);
  const to =
    parsed.to ??
    (parsed.from
      ? new Date(startOfUtcDay(parsed.from).getTime() + DEFAULT_STATS_DAYS * DAY_MS)
      : new Date(startOfUtcDay(now).getTime() + DAY_MS));
  const from =
    parsed.from ??
    new Date(startOfUtcDay(new Date(to.getTime() - 1)).getTime() - (DEFAULT_STATS_DAYS - 1) * DAY_MS);
  const dayCount =
    (startOfUtcDay(new Date(to.getTime() - 1)).getTime() - startOfUtcDay(from).getTime()) / DAY_MS + 1;
  if (dayCount > MAX_STATS_DAYS) {
    throw new BadRequestException(`The statistics range may span at most ${MAX_STATS_DAYS} days`);
  }
  return { from, to, days: utcDays(from, to) };
}

export interface GroupCount {
  _id: string | null;
  count: number;
}

/** What the `$facet` stage of the statistics aggregation returns (one document). */
export interface StatsFacet {
  total: { count: number }[];
  byStatus: GroupCount[];
  byTopic: GroupCount[];
  byPriority: GroupCount[];
  recent: {
    _id: unknown;
    subject: string;
    email: string;
    status: TicketStatus;
    priority: TicketPriority;
    createdAt: Date;
  }[];
  volume: GroupCount[];
  resolution: { averageMs: number | null }[];
}

/** Every known key with its count (zero when absent), plus any unexpected stored value. */
export function countsByKey(keys: readonly string[], groups: GroupCount[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(keys.map((key) => [key, 0]));
  for (const group of groups)
    if (group._id !== null) counts[group._id] = (counts[group._id] ?? 0) + group.count;
  return counts;
}

/** One entry per day, zero when the day had no tickets. */
export function zeroFillDays(days: string[], groups: GroupCount[]): DailyCountView[] {
  const counts = new Map(groups.map((group) => [group._id, group.count]));
  return days.map((date) => ({ date, count: counts.get(date) ?? 0 }));
}

/** Milliseconds to hours, 2 decimals; 0 when nothing was resolved. */
export function toHours(ms: number | null | undefined): number {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 0;
  return Math.round((ms / 3_600_000) * 100) / 100;
}

export function shapeStats(facet: StatsFacet, days: string[]): TicketStatsView {
  const recentActivity: TicketActivityView[] = facet.recent.map((ticket) => ({
    _id: String(ticket._id),
    subject: ticket.subject,
    email: ticket.email,
    status: ticket.status,
    priority: ticket.priority,
    createdAt: ticket.createdAt,
  }));
  return {
    total: facet.total[0]?.count ?? 0,
    byStatus: countsByKey(TICKET_STATUSES, facet.byStatus),
    byTopic: countsByKey(TICKET_TOPICS, facet.byTopic),
    byPriority: countsByKey(TICKET_PRIORITIES, facet.byPriority),
    recentActivity,
    volumeOverTime: zeroFillDays(days, facet.volume),
    averageResolutionTime: toHours(facet.resolution[0]?.averageMs),
  };
}
