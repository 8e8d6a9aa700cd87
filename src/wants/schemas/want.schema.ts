import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { PRIORITIES, type Priority } from '../../common/priority';

export const WANT_STATUSES = [
  'open',
  'under_review',
  'planned',
  'in_progress',
  'completed',
  'declined',
] as const;
export type WantStatus = (typeof WANT_STATUSES)[number];

export const WANT_SORTS = ['votes', 'newest', 'oldest'] as const;
export type WantSort = (typeof WANT_SORTS)[number];

export const TITLE_MAX = 200;
export const DESCRIPTION_MAX = 5000;
export const CATEGORY_MAX = 50;

/** A feature request of one app. `voteCount` always equals the number of its vote records. */
@Schema({ collection: 'wants', timestamps: true })
export class Want {
  _id: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true, maxlength: TITLE_MAX }) title: string;
  @Prop({ required: true, maxlength: DESCRIPTION_MAX }) description: string;
  @Prop({ required: true, maxlength: CATEGORY_MAX }) category: string;
  @Prop({ type: String, enum: WANT_STATUSES, default: 'open' }) status: WantStatus;
  @Prop({ type: String, enum: PRIORITIES, default: 'normal' }) priority: Priority;
  @Prop({ default: 0, min: 0 }) voteCount: number;
  /** Lower-cased (one spelling per address): a GDPR erasure finds it by one index lookup. */
  @Prop({ lowercase: true, trim: true }) authorEmail?: string;
  createdAt: Date;
  updatedAt: Date;
}

export const WantSchema = SchemaFactory.createForClass(Want);

// WantsService.list: the app, then any status or category equality, then the whole sort of SORTS in
// WantsService (`_id` included: findPage breaks ties on it), so a page is read in order, not sorted.
// sort=votes (the default) without a filter.
WantSchema.index({ appId: 1, voteCount: -1, createdAt: -1, _id: -1 });
// sort=votes filtered by status.
WantSchema.index({ appId: 1, status: 1, voteCount: -1, createdAt: -1, _id: -1 });
// sort=votes filtered by category.
WantSchema.index({ appId: 1, category: 1, voteCount: -1, createdAt: -1, _id: -1 });
// sort=newest, and sort=oldest walking it backwards.
WantSchema.index({ appId: 1, createdAt: -1, _id: -1 });
// GDPR erasure: the wants one address wrote, in any app (only wants with an author address are in it).
WantSchema.index({ authorEmail: 1 }, { sparse: true });
