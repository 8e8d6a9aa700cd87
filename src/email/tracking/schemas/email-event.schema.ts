import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { EMAIL_STREAMS, type EmailStream } from '../../jobs/schemas/email-job.schema';

/** The event types analytics count (spec "Events"); `delivery_delayed` is recorded and listed only. */
export const EMAIL_EVENT_TYPES = [
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'unsubscribed',
] as const;
export type EmailEventType = (typeof EMAIL_EVENT_TYPES)[number];

export const BOUNCE_TYPES = ['hard', 'soft'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];

/**
 * One e-mail event (spec "E-mail event"). Tracking writes `opened` and `clicked` (provider `tracking`), the
 * worker `sent` (provider `smtp`, or `outbox` without SMTP), the primary provider's webhook the rest
 * (provider `primary`). Every event is written once, by `EmailEventLedger`, which also updates the analytics
 * counters.
 */
@Schema({ collection: 'email_events', timestamps: { createdAt: true, updatedAt: false } })
export class EmailEvent {
  _id: Types.ObjectId;
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ type: String, default: null }) contactId: string | null;
  /**
   * The message: the SMTP Message-ID the worker recorded (`sent`, provider events); tracking events name
   * the campaign message by its idempotency key `campaign:<campaignId>:<contactId>`.
   */
  @Prop({ type: String, default: null }) messageId: string | null;
  @Prop({ type: String, default: null }) campaignId: string | null;
  /**
   * The stream of the message (its job's): written on every event since streams were kept on events;
   * older events have none (docs/decisions/data-event-stream.md).
   */
  @Prop({ type: String, enum: EMAIL_STREAMS }) stream?: EmailStream;
  @Prop({ required: true }) provider: string;
  @Prop({ type: String, enum: EMAIL_EVENT_TYPES, required: true }) type: EmailEventType;
  /** Clicks: which link of the campaign's table, and its URL. */
  @Prop() linkIndex?: number;
  @Prop() url?: string;
  @Prop({ type: String, default: null }) userAgent: string | null;
  /**
   * Looks like a machine (mail-privacy proxy, link scanner), not a person: counted apart from human opens.
   */
  @Prop({ default: false }) automated: boolean;
  /** Bounces: `hard` (permanent: the address is suppressed) or `soft`. */
  @Prop({ type: String, enum: BOUNCE_TYPES }) bounceType?: BounceType;
  /**
   * `sent` events of the worker: the message left on an attempt that followed one whose outcome was unknown
   * (the job's `unknownOutcomes`), so it may have reached the person twice; counted as `resentAfterUnknown`.
   */
  @Prop() resentAfterUnknown?: boolean;
  /** Provider events: the `webhook-id` of the delivery that carried it. */
  @Prop() webhookId?: string;
  /** `createdAt` + EMAIL_EVENTS_RETENTION_DAYS: the TTL index removes the event then. */
  @Prop() expiresAt?: Date;
  createdAt: Date;
}

export const EmailEventSchema = SchemaFactory.createForClass(EmailEvent);
// Indexes of GET /admin/email-events, one per filter (equality on the filter's field, then the createdAt
// sort, then `_id`, the page's tie-breaker; EMAIL_EVENT_FILTER_ORDER in EmailEventsService names which leads
// when several filters are given, the others are residual conditions). Analytics never read this collection:
// they read the counters. messageId: the events of one message (also GET
// /admin/email-events/message/{messageId}).
EmailEventSchema.index({ messageId: 1, createdAt: -1, _id: -1 });
// contactId: a person's events, newest first (also their data export).
EmailEventSchema.index({ contactId: 1, createdAt: -1, _id: -1 });
// campaignId: a campaign's events (docs/architecture.md "Database": events are keyed by campaign).
EmailEventSchema.index({ campaignId: 1, createdAt: -1, _id: -1 });
// A finished campaign's worker `sent` events, counted to check its counters (CampaignCountersRebuild).
EmailEventSchema.index({ campaignId: 1, type: 1, provider: 1 });
// A segment's engagement filter (ContactEmailEvents.engagedAmong): a batch of people's human opens or
// clicks of one app's mail, since a time.
EmailEventSchema.index({ contactId: 1, appId: 1, type: 1, automated: 1, createdAt: -1 });
// appId: one app's events.
EmailEventSchema.index({ appId: 1, createdAt: -1, _id: -1 });
// type within a campaign or an app (a campaign's bounces, an app's complaints): a rare type is a page's
// worth of keys, not a walk through every event of the campaign or app.
EmailEventSchema.index({ campaignId: 1, type: 1, createdAt: -1, _id: -1 });
EmailEventSchema.index({ appId: 1, type: 1, createdAt: -1, _id: -1 });
// stream: one stream's events, on their own or within one app (a stream within a campaign, a type or a
// provider is refused: EmailEventsService).
EmailEventSchema.index({ stream: 1, createdAt: -1, _id: -1 });
EmailEventSchema.index({ appId: 1, stream: 1, createdAt: -1, _id: -1 });
// type, and provider: the rarer filters on their own.
EmailEventSchema.index({ type: 1, createdAt: -1, _id: -1 });
EmailEventSchema.index({ provider: 1, createdAt: -1, _id: -1 });
// No filter: the newest events.
EmailEventSchema.index({ createdAt: -1, _id: -1 });
// Retention (EMAIL_EVENTS_RETENTION_DAYS): a date computed at write time keeps the index spec fixed when
// the setting changes; events written before the field are given one by `npm run db:indexes`.
EmailEventSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
