import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema } from 'mongoose';
import type { EmailStream } from '../../jobs/schemas/email-job.schema';

/**
 * The analytics counters (docs/architecture.md "Analytics"): aggregated by `AnalyticsCounters` when events
 * are written, so every analytics read is a lookup by `_id` (or a unique key) whatever the number of events.
 * Field names of the counts are the counter names of `CounterName` (analytics-counters.ts).
 */
export type Counts = Partial<Record<string, number>>;

/** One campaign's totals, per-day counts per type, and clicks per link. `_id` is the campaign id. */
@Schema({ collection: 'email_campaign_counters', minimize: false, versionKey: false })
export class CampaignCounters {
  @Prop({ type: String }) _id: string;
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} }) totals: Counts;
  /** `YYYY-MM-DD` (UTC) → counts of that day. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} }) daily: Record<string, Counts>;
  /** Link index → `{url, clicks}` (human clicks). */
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} }) links: Record<
    string,
    { url?: string; clicks?: number }
  >;
  /** People with at least one event: the recipients list's length and its last slot. */
  @Prop({ default: 0 }) recipients: number;
}
export const CampaignCountersSchema = SchemaFactory.createForClass(CampaignCounters);

/**
 * One day's counts of one app (`scope` = the app id, `-` for service mail) or of every app (`scope` = `*`).
 * `_id` is `<scope>|<YYYY-MM-DD>`: the overview reads the days of a range by `_id`.
 */
@Schema({ collection: 'email_daily_counters', minimize: false, versionKey: false })
export class DailyCounters {
  @Prop({ type: String }) _id: string;
  @Prop({ required: true }) scope: string;
  @Prop({ required: true }) date: string;
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} }) totals: Counts;
  /** The same counts per message stream (events written before streams were kept count in totals only). */
  @Prop({ type: MongooseSchema.Types.Mixed }) streams?: Partial<Record<EmailStream, Counts>>;
}
export const DailyCountersSchema = SchemaFactory.createForClass(DailyCounters);

/** A person's latest events as the person view lists them (no personal data: ids and types only). */
export interface RecentEvent {
  _id: string;
  campaignId: string | null;
  messageId: string | null;
  type: string;
  createdAt: Date;
}

/** One person's totals and latest events. `_id` is the contact id. */
@Schema({ collection: 'email_contact_counters', minimize: false, versionKey: false })
export class ContactCounters {
  @Prop({ type: String }) _id: string;
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} }) totals: Counts;
  /** Oldest first, capped at RECENT_EVENTS_MAX (the newest stay). */
  @Prop({ type: [MongooseSchema.Types.Mixed], default: [] }) recent: RecentEvent[];
}
export const ContactCountersSchema = SchemaFactory.createForClass(ContactCounters);

/**
 * One person in one campaign's recipients list: `_id` is `<campaignId>:<contactId>`; `slot` is
 * `<campaignId>#<n>`, n counting from 1 in the order people first had an event, so a page is a lookup of
 * `limit` slots (a unique key) instead of a sorted scan.
 */
@Schema({ collection: 'email_campaign_recipients', minimize: false, versionKey: false })
export class CampaignRecipient {
  @Prop({ type: String }) _id: string;
  @Prop({ required: true }) campaignId: string;
  @Prop({ required: true }) contactId: string;
  @Prop({ type: [String], default: [] }) events: string[];
  @Prop({ type: String, default: null }) lastEvent: string | null;
  @Prop({ type: Date, default: null }) lastEventAt: Date | null;
  @Prop() slot?: string;
}
export const CampaignRecipientSchema = SchemaFactory.createForClass(CampaignRecipient);
// A page of the recipients list: the slots of that page, one unique-key lookup each.
CampaignRecipientSchema.index({ slot: 1 }, { unique: true, sparse: true });

/**
 * "This person has opened (clicked) this campaign": `_id` is `<campaignId>:<contactId>:<type>`. Its insert
 * succeeds once, which is what makes a unique open or click count once under any number of writers.
 */
@Schema({ collection: 'email_unique_flags', versionKey: false })
export class UniqueFlag {
  @Prop({ type: String }) _id: string;
  @Prop({ required: true }) at: Date;
  /** The event that took the flag: a retried write of the same event recognises its own flag. */
  @Prop({ type: String }) eventId?: string;
}
export const UniqueFlagSchema = SchemaFactory.createForClass(UniqueFlag);

/**
 * A provider webhook delivery already handled: `_id` is its `webhook-id`, so a retry of the same delivery is
 * recognised by the unique `_id` and not processed twice. Signatures older than 5 minutes are refused, so a
 * receipt is needed for a short while only; a day is kept.
 */
@Schema({ collection: 'email_webhook_receipts', versionKey: false })
export class WebhookReceipt {
  @Prop({ type: String }) _id: string;
  @Prop({ type: String, default: null }) eventId: string | null;
  @Prop({ required: true }) receivedAt: Date;
  /**
   * False from the claim until the delivery's event and effects are stored: a repeat of an unfinished one is
   * processed again (ProviderEventBatch). Absent on receipts written before the flag: finished.
   */
  @Prop({ type: Boolean }) done?: boolean;
}
export const WebhookReceiptSchema = SchemaFactory.createForClass(WebhookReceipt);
// Receipts expire after a day (the signature tolerance is 5 minutes).
WebhookReceiptSchema.index({ receivedAt: 1 }, { expireAfterSeconds: 86_400 });
