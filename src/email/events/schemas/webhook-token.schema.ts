import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** How long a Mailgun token is remembered: longer than a signed timestamp is accepted (5 minutes). */
export const WEBHOOK_TOKEN_TTL_SECONDS = 15 * 60;

/**
 * A Mailgun webhook token already accepted (`_id`): the unique `_id` refuses its replay on every instance.
 * A replay also needs a timestamp under 5 minutes old, so a token is forgotten after 15.
 */
@Schema({ collection: 'email_webhook_tokens', versionKey: false })
export class WebhookToken {
  @Prop({ type: String }) _id: string;
  @Prop({ required: true }) receivedAt: Date;
}
export const WebhookTokenSchema = SchemaFactory.createForClass(WebhookToken);
WebhookTokenSchema.index({ receivedAt: 1 }, { expireAfterSeconds: WEBHOOK_TOKEN_TTL_SECONDS });
