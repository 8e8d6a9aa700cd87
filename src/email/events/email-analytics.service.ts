import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import type { Pagination } from '../../common/http/envelope';
import { paginationOf } from '../../common/pagination/pagination';
import { EmailJob, type EmailStream } from '../jobs/schemas/email-job.schema';
import { ALL_APPS, dayOf } from './analytics-counters';
import {
  type CampaignAnalyticsView,
  type ContactAnalyticsView,
  OVERVIEW_MAX_DAYS,
  type OverviewQuery,
  type OverviewView,
  type RecipientView,
  type StreamTotals,
  type TimelineEntry,
  type TopLink,
} from './dto/analytics.dto';
import { ratesOf } from './rates';
import {
  CampaignCounters,
  CampaignRecipient,
  ContactCounters,
  type Counts,
  DailyCounters,
} from './schemas/analytics.schemas';

const DAY_MS = 86_400_000;
const TOP_LINKS = 10;
const DEFAULT_OVERVIEW_DAYS = 30;

/**
 * The analytics views (spec "E-mail Analytics"). Every figure comes from the counters that
 * AnalyticsCounters keeps as events arrive, read by `_id` or by a unique key: a read costs the same at
 * 10,000 and at 1,000,000 events (bench/analytics.bench.ts).
 */
@Injectable()
export class EmailAnalyticsService {
  constructor(
    @InjectModel(CampaignCounters.name) private readonly campaigns: Model<CampaignCounters>,
    @InjectModel(CampaignRecipient.name) private readonly recipientsList: Model<CampaignRecipient>,
    @InjectModel(ContactCounters.name) private readonly contacts: Model<ContactCounters>,
    @InjectModel(DailyCounters.name) private readonly daily: Model<DailyCounters>,
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
  ) {}

  /**
   * A campaign without counters is known when mail was queued under its id (it has zeros until the first
   * event); otherwise the id names nothing and the answer is a 404, like any unknown id, never a page of
   * zeros that looks like a campaign nobody opened. One index probe (`campaignId` leads an index of jobs).
   */
  private async requireKnown(campaignId: string, counters: CampaignCounters | null): Promise<void> {
    if (counters) return;
    if (!(await this.jobs.exists({ campaignId }).exec())) throw new NotFoundException('Campaign not found');
  }

  /** One read by `_id` (and, without counters, the probe above). A campaign without events has zeros. */
  async campaign(campaignId: string): Promise<CampaignAnalyticsView> {
    const counters = await this.campaigns.findById(campaignId).lean<CampaignCounters>().exec();
    await this.requireKnown(campaignId, counters);
    const n = counted(counters?.totals);
    const figures = {
      sent: n('sent'),
      resentAfterUnknown: n('resentAfterUnknown'),
      delivered: n('delivered'),
      opened: n('opened'),
      uniqueOpens: n('uniqueOpened'),
      clicked: n('clicked'),
      uniqueClicks: n('uniqueClicked'),
      bounced: n('bounced'),
      hardBounced: n('hardBounced'),
      complained: n('complained'),
      unsubscribed: n('unsubscribed'),
      automatedOpens: n('automatedOpened'),
      automatedClicks: n('automatedClicked'),
    };
    const { openRate, clickThroughRate } = ratesOf(figures);
    return {
      campaignId,
      ...figures,
      openRate,
      clickThroughRate,
      topLinks: topLinks(counters?.links ?? {}),
      timeline: campaignTimeline(counters?.daily ?? {}),
    };
  }

  /**
   * One page of the people with events in the campaign, in the order they first had one: the page's slots
   * are read by their unique key (`<campaignId>#<n>`), the total from the campaign's counters.
   */
  async recipients(
    campaignId: string,
    page: number,
    limit: number,
  ): Promise<{ items: RecipientView[]; pagination: Pagination }> {
    const counters = await this.campaigns
      .findById(campaignId, { recipients: 1 })
      .lean<CampaignCounters>()
      .exec();
    await this.requireKnown(campaignId, counters);
    const total = counters?.recipients ?? 0;
    const first = (page - 1) * limit + 1;
    const slots: string[] = [];
    for (let n = first; n <= Math.min(total, first + limit - 1); n++) slots.push(`${campaignId}#${n}`);
    const entries =
      slots.length === 0
        ? []
        : await this.recipientsList
            .find({ slot: trusted({ $in: slots }) })
            .lean<CampaignRecipient[]>()
            .exec();
    entries.sort((a, b) => slotNumber(a.slot) - slotNumber(b.slot));
    return {
      items: entries.map((entry) => ({
        contactId: entry.contactId,
        events: entry.events,
        lastEvent: entry.lastEvent,
        lastEventAt: entry.lastEventAt,
      })),
      pagination: paginationOf(page, limit, total),
    };
  }

  /** A person's totals and one page of their latest events: one read by `_id`. */
  async contact(
    contactId: string,
    page: number,
    limit: number,
  ): Promise<{ data: ContactAnalyticsView; pagination: Pagination }> {
    const counters = await this.contacts.findById(contactId).lean<ContactCounters>().exec();
    const n = counted(counters?.totals);
    const recent = [...(counters?.recent ?? [])].reverse();
    const events = recent.slice((page - 1) * limit, page * limit).map((event) => ({
      _id: event._id,
      campaignId: event.campaignId,
      messageId: event.messageId,
      type: event.type,
      createdAt: event.createdAt,
    }));
    return {
      data: {
        contactId,
        totalSent: n('sent'),
        totalOpened: n('opened'),
        totalClicked: n('clicked'),
        totalBounced: n('bounced'),
        totalComplained: n('complained'),
        totalAutomatedOpens: n('automatedOpened'),
        events,
      },
      pagination: paginationOf(page, limit, recent.length),
    };
  }

  /**
   * The days of the range, read by `_id` (at most OVERVIEW_MAX_DAYS documents). With `stream`, every figure
   * is that stream's; each stream's totals (`byStream`) come from the same documents.
   */
  async overview(query: OverviewQuery): Promise<OverviewView> {
    const { from, to } = rangeOf(query);
    const scope = query.appId ?? ALL_APPS;
    const dates: string[] = [];
    for (let day = from.getTime(); day <= to.getTime(); day += DAY_MS) dates.push(dayOf(new Date(day)));
    const docs = await this.daily
      .find({ _id: trusted({ $in: dates.map((date) => `${scope}|${date}`) }) })
      .lean<DailyCounters[]>()
      .exec();
    docs.sort((a, b) => a.date.localeCompare(b.date));
    const countsOf = (doc: DailyCounters, stream: EmailStream | undefined) =>
      stream ? doc.streams?.[stream] : doc.totals;
    const n = counted(summed(docs.map((doc) => countsOf(doc, query.stream))));
    const figures = {
      sent: n('sent'),
      delivered: n('delivered'),
      uniqueOpens: n('uniqueOpened'),
      uniqueClicks: n('uniqueClicked'),
      bounced: n('bounced'),
      complained: n('complained'),
    };
    return {
      from: dates[0],
      to: dates[dates.length - 1],
      stream: query.stream ?? null,
      totalSent: figures.sent,
      totalDelivered: figures.delivered,
      totalOpened: n('opened'),
      totalUniqueOpens: figures.uniqueOpens,
      totalClicked: n('clicked'),
      totalUniqueClicks: figures.uniqueClicks,
      totalBounced: figures.bounced,
      totalComplained: figures.complained,
      totalUnsubscribed: n('unsubscribed'),
      totalAutomatedOpens: n('automatedOpened'),
      ...ratesOf(figures),
      timeline: docs.map((doc) => {
        const day = counted(countsOf(doc, query.stream));
        return {
          date: doc.date,
          sent: day('sent'),
          delivered: day('delivered'),
          opened: day('opened'),
          clicked: day('clicked'),
        };
      }),
      byStream: {
        transactional: streamTotals(summed(docs.map((doc) => doc.streams?.transactional))),
        broadcast: streamTotals(summed(docs.map((doc) => doc.streams?.broadcast))),
      },
    };
  }
}

function summed(counts: (Counts | undefined)[]): Counts {
  const sum: Record<string, number> = {};
  for (const each of counts) {
    for (const [name, value] of Object.entries(each ?? {})) sum[name] = (sum[name] ?? 0) + (value ?? 0);
  }
  return sum;
}

function streamTotals(counts: Counts): StreamTotals {
  const n = counted(counts);
  return {
    sent: n('sent'),
    delivered: n('delivered'),
    opened: n('opened'),
    clicked: n('clicked'),
    bounced: n('bounced'),
    complained: n('complained'),
    unsubscribed: n('unsubscribed'),
  };
}

const counted =
  (totals: Counts | undefined) =>
  (name: string): number =>
    totals?.[name] ?? 0;

function slotNumber(slot: string | undefined): number {
  return Number(slot?.slice(slot.lastIndexOf('#') + 1) ?? 0);
}

function topLinks(links: Record<string, { url?: string; clicks?: number }>): TopLink[] {
  return Object.values(links)
    .filter((link): link is { url: string; clicks: number } => !!link.url && (link.clicks ?? 0) > 0)
    .sort((a, b) => b.clicks - a.clicks || a.url.localeCompare(b.url))
    .slice(0, TOP_LINKS)
    .map(({ url, clicks }) => ({ url, clicks }));
}

function campaignTimeline(daily: Record<string, Counts>): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (const date of Object.keys(daily).sort()) {
    for (const [type, count] of Object.entries(daily[date] ?? {})) {
      // Unique counts and the hard-bounce subset are figures of the totals, not event types of a day.
      if (type === 'uniqueOpened' || type === 'uniqueClicked' || type === 'hardBounced' || !count) continue;
      entries.push({ date, type, count });
    }
  }
  return entries;
}

/** `from`/`to` as UTC days; default the last 30 days; at most OVERVIEW_MAX_DAYS; `from` after `to` → 400. */
function rangeOf(query: OverviewQuery): { from: Date; to: Date } {
  const to = startOfDay(query.to ? new Date(query.to) : new Date());
  const from = query.from
    ? startOfDay(new Date(query.from))
    : new Date(to.getTime() - (DEFAULT_OVERVIEW_DAYS - 1) * DAY_MS);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
    throw new BadRequestException('from and to must be dates');
  if (from > to) throw new BadRequestException('from must not be after to');
  if ((to.getTime() - from.getTime()) / DAY_MS + 1 > OVERVIEW_MAX_DAYS) {
    throw new BadRequestException(`from and to may span at most ${OVERVIEW_MAX_DAYS} days`);
  }
  return { from, to };
}

function startOfDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}
