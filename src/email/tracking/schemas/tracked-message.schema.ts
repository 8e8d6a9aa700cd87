import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * One campaign message's tracking tally (docs/decisions/security-tracking-replays.md): how many open and
 * click events it has recorded (at most `eventsPerMessage` each, plus a person's first human one), and how
 * many more came after that and were only counted here. `_id` is the message id of its events
 * (`campaign:<campaignId>:<contactId>`), so taking a slot is one conditional update by `_id`. Written with
 * `$inc` by TrackedMessages; ids only, no personal data.
 */
@Schema({ collection: 'email_tracked_messages', versionKey: false })
export class TrackedMessage {
  @Prop({ type: String }) _id: string;
  @Prop() opened?: number;
  @Prop() clicked?: number;
  @Prop() openedOverCap?: number;
  @Prop() clickedOverCap?: number;
  /** A human open (click) has been recorded: until then, one more is recorded even at the cap. */
  @Prop() humanOpened?: boolean;
  @Prop() humanClicked?: boolean;
}

export const TrackedMessageSchema = SchemaFactory.createForClass(TrackedMessage);
