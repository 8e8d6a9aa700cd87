import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { EMAIL_STREAMS, type EmailStream } from './email-job.schema';

/**
 * What later steps need of an `email.send` job once the job itself is gone (EMAIL_JOB_RETENTION_DAYS):
 * the idempotency key (a reused key must not send again) and who the message was for (a bounce or complaint
 * that arrives later still suppresses the address and counts in the analytics). Written when the job is
 * queued, completed when the worker records the send, kept until `expiresAt` (EMAIL_MESSAGE_RETENTION_DAYS
 * after its last event). docs/operations/data-retention.md.
 */
@Schema({ collection: 'email_messages', versionKey: false })
export class MessageLedgerEntry {
  /** The job's id: our Message-ID names it, so a provider event finds the entry by `_id`. */
  _id: Types.ObjectId;
  @Prop({ required: true }) idempotencyKey: string;
  /** Our Message-ID (`<job id>@<sender domain>`), as provider events name the message. */
  @Prop({ required: true }) messageId: string;
  /** The recipient, lower-cased (what a bounce suppresses); a placeholder after a GDPR erasure. */
  @Prop({ type: String, default: null }) to: string | null;
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ type: String, default: null }) campaignId: string | null;
  @Prop({ type: String, default: null }) contactId: string | null;
  /** Its job's stream (absent on entries written before it was kept: `streamOf` reads those). */
  @Prop({ type: String, enum: EMAIL_STREAMS }) stream?: EmailStream;
  /** `smtp`, `resend-api` or `outbox`, once sent. */
  @Prop({ type: String }) provider?: string;
  /**
   * The provider's own id for the message when its answer gave one (Resend's API `id`; SES and SendGrid
   * in their SMTP reply): events that name the message only so find it. docs/operations/email-transports.md.
   */
  @Prop({ type: String }) providerMessageId?: string;
  @Prop({ required: true }) createdAt: Date;
  /** When the worker recorded the send (absent while queued, or when the send's outcome was lost). */
  @Prop() sentAt?: Date;
  /** The last thing that happened to the message: queued, sent, or a provider event about it. */
  @Prop({ required: true }) lastEventAt: Date;
  /** `lastEventAt` + EMAIL_MESSAGE_RETENTION_DAYS: the TTL index removes the entry then. */
  @Prop({ required: true }) expiresAt: Date;
}

export const MessageLedgerSchema = SchemaFactory.createForClass(MessageLedgerEntry);
// Enqueuing looks keys up here first: a key whose job has expired still names its message.
MessageLedgerSchema.index({ idempotencyKey: 1 }, { unique: true });
// A provider event that names the message only by the provider's id (docs/api/providers/README.md).
MessageLedgerSchema.index({ providerMessageId: 1 }, { sparse: true });
// A GDPR erasure replaces the address in every entry to it (eq(to)); the soft-bounce rule reads an
// address's latest messages (eq(to) sort(_id:-1), SoftBounceRule).
MessageLedgerSchema.index({ to: 1, _id: -1 });
// Retention measured from the last event: each event moves `expiresAt`, the index removes the entry then
// (a date computed at write time keeps the index spec fixed when the setting changes).
MessageLedgerSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
