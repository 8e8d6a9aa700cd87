import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { PRIORITIES, type Priority } from '../../common/priority';

export const FEEDBACK_TYPES = ['bug', 'feature', 'improvement', 'question', 'praise', 'other'] as const;
export type FeedbackType = (typeof FEEDBACK_TYPES)[number];

export const FEEDBACK_STATUSES = ['new', 'reviewed', 'in_progress', 'resolved', 'archived'] as const;
export type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];

export const FEEDBACK_SORT_FIELDS = ['createdAt', 'updatedAt', 'type', 'status', 'priority'] as const;
export type FeedbackSortField = (typeof FEEDBACK_SORT_FIELDS)[number];

export const SUBJECT_MAX = 200;
export const MESSAGE_MAX = 5000;

/** Anonymous feedback sent to one app. */
@Schema({ collection: 'feedback', timestamps: true })
export class Feedback {
  _id: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ type: String, enum: FEEDBACK_TYPES, required: true }) type: FeedbackType;
  @Prop({ required: true, maxlength: SUBJECT_MAX }) subject: string;
  @Prop({ required: true, maxlength: MESSAGE_MAX }) message: string;
  /** Lower-cased (one spelling per address): a GDPR erasure finds it by one index lookup. */
  @Prop({ lowercase: true, trim: true }) email?: string;
  @Prop({ type: String, enum: FEEDBACK_STATUSES, default: 'new' }) status: FeedbackStatus;
  @Prop({ type: String, enum: PRIORITIES, default: 'normal' }) priority: Priority;
  createdAt: Date;
  updatedAt: Date;
}

export const FeedbackSchema = SchemaFactory.createForClass(Feedback);

// Admin list, newest first (the default sort) and stats by app.
FeedbackSchema.index({ appId: 1, createdAt: -1, _id: -1 });
// Admin list filtered by status (the inbox: new first).
FeedbackSchema.index({ appId: 1, status: 1, createdAt: -1, _id: -1 });
// Admin list filtered by type.
FeedbackSchema.index({ appId: 1, type: 1, createdAt: -1, _id: -1 });
// Admin list filtered by priority.
FeedbackSchema.index({ appId: 1, priority: 1, createdAt: -1, _id: -1 });
// GDPR erasure: the feedback one address left, in any app (only feedback with an address is in it).
FeedbackSchema.index({ email: 1 }, { sparse: true });
