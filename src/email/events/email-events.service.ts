import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import type { Pagination } from '../../common/http/envelope';
import { findPage } from '../../common/pagination/pagination';
import { SentMessageLookup } from '../jobs/sent-message-lookup';
import { campaignMessageId } from '../tracking/tracking-links';
import { EmailEvent } from '../tracking/schemas/email-event.schema';
import { EmailAnalyticsService } from './email-analytics.service';
import type { CampaignEventStats, ListEmailEventsQuery, MessageEventView } from './dto/email-event.dto';

/** The fields of the list filter, most selective first: the first one given leads the query's index. */
export const EMAIL_EVENT_FILTER_ORDER = [
  'messageId',
  'contactId',
  'campaignId',
  'appId',
  'type',
  'provider',
  'stream',
] as const;

/**
 * `provider` leads its own index, and within one message's or one person's events (a handful) it is
 * filtered on the way; with a campaign, an app or a type it would be filtered while walking millions of
 * keys for a rare provider, so that combination is refused (docs/api/newsletters.md "E-mail events").
 */
function assertProviderServed(query: ListEmailEventsQuery): void {
  const small = query.messageId !== undefined || query.contactId !== undefined;
  const wide = (['campaignId', 'appId', 'type'] as const).filter((field) => query[field] !== undefined);
  if (query.provider !== undefined && !small && wide.length) {
    throw new BadRequestException(
      `provider cannot be combined with ${wide.join(', ')}: filter by provider alone, or within a messageId ` +
        'or contactId',
    );
  }
}

/**
 * `stream` leads its own index and one within an app; within a message's or a person's events it is
 * filtered on the way. A campaign's events are all of one stream, and with a type or a provider it would
 * be filtered while walking millions of keys, so those combinations are refused.
 */
function assertStreamServed(query: ListEmailEventsQuery): void {
  const wide = (['campaignId', 'type', 'provider'] as const).filter((field) => query[field] !== undefined);
  const small = query.messageId !== undefined || query.contactId !== undefined;
  if (query.stream !== undefined && !small && wide.length) {
    throw new BadRequestException(
      `stream cannot be combined with ${wide.join(', ')}: filter by stream alone, within an appId, or ` +
        'within a messageId or contactId',
    );
  }
}

/** Events one message may have (a message has a handful; this bounds a forged id's answer). */
const MESSAGE_EVENTS_MAX = 500;

/** The raw event views of the back office (spec "E-mail Events"). */
@Injectable()
export class EmailEventsService {
  constructor(
    @InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>,
    private readonly messages: SentMessageLookup,
    private readonly analytics: EmailAnalyticsService,
  ) {}

  /**
   * Newest first. Each filter is an equality on an indexed field (email-event.schema.ts: one index per
   * filter, `{<field>: 1, createdAt: -1}`, and `type` within a campaign or an app); with several, the first
   * of EMAIL_EVENT_FILTER_ORDER leads.
   */
  list(query: ListEmailEventsQuery): Promise<{ items: EmailEvent[]; pagination: Pagination }> {
    assertProviderServed(query);
    assertStreamServed(query);
    const filter: Record<string, string> = {};
    for (const field of EMAIL_EVENT_FILTER_ORDER) {
      const value = query[field];
      if (value !== undefined) filter[field] = value;
    }
    return findPage(this.events, {
      filter,
      sort: { createdAt: -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
      projection: { userAgent: 0 },
    });
  }

  /**
   * The events of one message, oldest first: those naming its Message-ID (worker, provider) and, for a
   * campaign message, its opens and clicks, which tracking records under the message's key (the index
   * `{messageId, createdAt}` serves both). 404 when nothing is known of the message.
   */
  async ofMessage(messageId: string): Promise<MessageEventView[]> {
    const ids = [messageId];
    const message = await this.messages.find(messageId);
    if (message?.campaignId && message.contactId) {
      ids.push(campaignMessageId(message.campaignId, message.contactId));
    }
    const found = await this.events
      .find({ messageId: trusted({ $in: ids }) }, { type: 1, provider: 1, createdAt: 1 })
      .sort({ createdAt: 1, _id: 1 })
      .limit(MESSAGE_EVENTS_MAX)
      .lean<EmailEvent[]>()
      .exec();
    if (found.length === 0 && !message) throw new NotFoundException('No events for this message');
    return found.map((event) => ({
      _id: String(event._id),
      type: event.type,
      provider: event.provider,
      createdAt: event.createdAt,
    }));
  }

  /** From the campaign's counters (one read by `_id`), like the analytics. */
  async campaignStats(campaignId: string): Promise<CampaignEventStats> {
    const figures = await this.analytics.campaign(campaignId);
    return {
      sent: figures.sent,
      delivered: figures.delivered,
      opened: figures.opened,
      clicked: figures.clicked,
      bounced: figures.bounced,
      openRate: figures.openRate,
      clickRate: figures.clickThroughRate,
    };
  }
}
