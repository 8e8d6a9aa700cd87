import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { CHAT_CHANNELS, type ChatChannel } from '../chat-channels';

/** An app's own destination for one channel; without an active one the global default is used. */
@Schema({ collection: 'chat_routing_rules', timestamps: true })
export class ChatRule {
  _id: Types.ObjectId;

  @Prop({ required: true }) appId: string;
  @Prop({ type: String, enum: CHAT_CHANNELS, required: true }) channel: ChatChannel;
  @Prop({ required: true }) webhookUrl: string;
  @Prop({ default: true }) active: boolean;

  createdAt: Date;
  updatedAt: Date;
}

export const ChatRuleSchema = SchemaFactory.createForClass(ChatRule);
// One rule per app and channel (a second one is a 409); also serves the list by appId and the delivery's
// lookup of an app's rule for a channel (equality on both fields).
ChatRuleSchema.index({ appId: 1, channel: 1 }, { unique: true });
