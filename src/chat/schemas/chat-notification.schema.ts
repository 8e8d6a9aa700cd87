import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { KindStatuses } from '../../queue/queue-kind';
import { CHAT_CHANNELS, type ChatChannel } from '../chat-channels';

/**
 * `pending` → `processing` (claimed by one worker, under a lease) → `delivered`. A failed attempt goes to
 * `failed` with a later `nextAttemptAt` and is claimed again; after the last attempt, or on a refusal that
 * no retry can change (a 4xx answer, a non-public address in production), it is `dead`.
 */
export const CHAT_NOTIFICATION_STATUSES = ['pending', 'processing', 'delivered', 'failed', 'dead'] as const;
export type ChatNotificationStatus = (typeof CHAT_NOTIFICATION_STATUSES)[number];

/** The statuses as the queue engine names them (`pending` and `failed` are claimable once due). */
export const CHAT_KIND_STATUSES = {
  pending: 'pending',
  retrying: 'failed',
  held: 'processing',
  done: 'delivered',
  dead: 'dead',
} as const satisfies KindStatuses;

/** Where a notification went: the app's rule, `CHAT_DEFAULT_WEBHOOK_URL`, or the service's log. */
export const CHAT_DESTINATION_KINDS = ['rule', 'default', 'log'] as const;
export type ChatDestinationKind = (typeof CHAT_DESTINATION_KINDS)[number];

/** The body shape a webhook was sent: Slack `{text}`, Discord `{content}`, or the generic JSON. */
export const WEBHOOK_FORMATS = ['slack', 'discord', 'json'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** The values a notification carries: flat, so a chat line can show them and erasure can find them. */
export type ChatData = Record<string, string | number | boolean | null>;

/**
 * One chat notification in the outbox (`chat_notifications`): stored when its event happens, delivered by
 * the scheduled worker. The destination is chosen at delivery, so a rule changed in between applies.
 */
@Schema({ collection: 'chat_notifications', timestamps: true, minimize: false })
export class ChatNotification {
  _id: Types.ObjectId;

  @Prop({ required: true }) appId: string;
  @Prop({ type: String, enum: CHAT_CHANNELS, required: true }) channel: ChatChannel;
  /** The domain event, e.g. `ticket.created` (the digest counts by it). */
  @Prop({ required: true }) event: string;
  /** One line, e.g. `New ticket`; the key fields are in `data`. */
  @Prop({ required: true }) summary: string;
  @Prop({ type: MongooseSchema.Types.Mixed, default: () => ({}) }) data: ChatData;
  /**
   * The lower-cased address of the person the notification is about (`data.email`), kept apart so a GDPR
   * erasure finds every notification that names them with one indexed lookup.
   */
  @Prop({ type: String }) email?: string;
  /** Storing the same key twice keeps one notification (the daily digest of several processes). */
  @Prop({ required: true }) key: string;

  @Prop({ type: String, enum: CHAT_NOTIFICATION_STATUSES, default: 'pending' })
  status: ChatNotificationStatus;
  @Prop({ default: 0 }) attempts: number;
  /** Due time of the next attempt (the backoff of a failed one). */
  @Prop({ required: true }) nextAttemptAt: Date;
  @Prop() lastError?: string;
  @Prop({ type: String, enum: CHAT_DESTINATION_KINDS }) destination?: ChatDestinationKind;
  @Prop({ type: String, enum: WEBHOOK_FORMATS }) format?: WebhookFormat;
  @Prop() deliveredAt?: Date;
  /**
   * When a delivered or dead notification is removed (TTL index, `CHAT_NOTIFICATION_RETENTION_DAYS`): the
   * outbox is not an archive. Absent until then, so a notification still to deliver is never removed.
   */
  @Prop() expiresAt?: Date;

  createdAt: Date;
  updatedAt: Date;
}

export const ChatNotificationSchema = SchemaFactory.createForClass(ChatNotification);
// The engine adds its lease fields and their indexes (QueueModule.forKind(CHAT_KIND)).
// ChatOutboxStore.insert: storing the same key twice keeps one notification.
ChatNotificationSchema.index({ key: 1 }, { unique: true });
// The engine's scan of due notifications (LeaseQueueStore.scanDue): status (equality, two values), then
// nextAttemptAt (sort and range); also ChatOutboxStore.countBacklog (status alone).
ChatNotificationSchema.index({ status: 1, nextAttemptAt: 1 });
// ChatOutboxStore.scrubAddress: the notifications that name one person.
ChatNotificationSchema.index({ email: 1 }, { sparse: true });
// ChatOutboxStore.countEvents (the daily digest): event (equality, a few values), then the createdAt range.
ChatNotificationSchema.index({ event: 1, createdAt: 1 });
// Retention: an ended notification is removed at its `expiresAt` (`CHAT_NOTIFICATION_RETENTION_DAYS`).
ChatNotificationSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
