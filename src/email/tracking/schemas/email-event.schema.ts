import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

export const EMAIL_EVENT_TYPES = ['opened', 'clicked'] as const;
export type EmailEventType = (typeof EMAIL_EVENT_TYPES)[number];

/**
 * One e-mail event (spec "E-mail event"). Tracking writes `opened` and `clicked` with provider `tracking`;
 * the analytics issue reads them (and adds provider webhooks' types).
 */
@Schema({ collection: 'email_events', timestamps: { createdAt: true, updatedAt: false } })
export class EmailEvent {
  _id: Types.ObjectId;
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ type: String, default: null }) contactId: string | null;
  /** For tracking: `campaign:<campaignId>:<contactId>`, the message's idempotency key. */
  @Prop({ type: String, default: null }) messageId: string | null;
  @Prop({ type: String, default: null }) campaignId: string | null;
  @Prop({ required: true }) provider: string;
  @Prop({ required: true }) type: string;
  /** Clicks: which link of the campaign's table, and its URL. */
  @Prop() linkIndex?: number;
  @Prop() url?: string;
  @Prop({ type: String, default: null }) userAgent: string | null;
  /** Looks like a machine (mail-privacy proxy, link scanner), not a person; recorded, not yet acted on. */
  @Prop({ default: false }) automated: boolean;
  createdAt: Date;
}

export const EmailEventSchema = SchemaFactory.createForClass(EmailEvent);
EmailEventSchema.index({ campaignId: 1, type: 1 });
EmailEventSchema.index({ contactId: 1, createdAt: -1 });
