import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import {
  LOCALES,
  type Locale,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
} from '../../../contacts/schemas/contact.schema';

/**
 * A segment's filter (docs/api/newsletters.md "Segments"): every field given narrows. The subscription
 * fields and topics are judged on the person's record, engagement on the e-mail events of the app's mail.
 */
@Schema({ _id: false })
export class SegmentFilter {
  @Prop({ type: String, enum: SUBSCRIPTION_STATUSES }) status?: SubscriptionStatus;
  @Prop({ type: String }) source?: string;
  @Prop({ type: String, enum: LOCALES }) locale?: Locale;
  @Prop({ type: Date }) subscribedBefore?: Date;
  @Prop({ type: Date }) subscribedAfter?: Date;
  /** People who dropped none of these topics. */
  @Prop({ type: [String], default: undefined }) keepsTopics?: string[];
  /** Opened (a human open) any of the app's campaigns in the last N days. */
  @Prop({ type: Number }) openedWithinDays?: number;
  /** Clicked a link of any of the app's campaigns in the last N days. */
  @Prop({ type: Number }) clickedWithinDays?: number;
  /** No open recorded (within the e-mail events' retention). */
  @Prop({ type: Boolean }) neverOpened?: boolean;
}
export const SegmentFilterSchema = SchemaFactory.createForClass(SegmentFilter);

/** A saved, named audience filter of one app. */
@Schema({ collection: 'segments', timestamps: true, minimize: false })
export class Segment {
  _id: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true }) name: string;
  @Prop({ type: SegmentFilterSchema, default: () => ({}) }) filter: SegmentFilter;
  @Prop({ type: String, default: null }) createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const SegmentSchema = SchemaFactory.createForClass(Segment);
// The app's segment list, newest first (`_id`: the page's tie-breaker).
SegmentSchema.index({ appId: 1, createdAt: -1, _id: -1 });
