import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

export const TEMPLATE_NAME_MAX = 200;
export const TEMPLATE_SUBJECT_MAX = 300;
/** A newsletter's HTML body: room for a long issue with inline styles, far below the 64 KiB body limit. */
export const TEMPLATE_CONTENT_MAX = 60_000;

/** A reusable newsletter of one app: a campaign created with its `templateId` takes the missing content. */
@Schema({ collection: 'newsletter_templates', timestamps: true })
export class NewsletterTemplate {
  _id: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true, maxlength: TEMPLATE_NAME_MAX }) name: string;
  @Prop({ required: true, maxlength: TEMPLATE_SUBJECT_MAX }) subject: string;
  @Prop({ required: true, maxlength: TEMPLATE_CONTENT_MAX }) htmlContent: string;
  @Prop({ type: String, default: null, maxlength: TEMPLATE_CONTENT_MAX }) textContent: string | null;
  @Prop({ default: true }) isActive: boolean;
  /** Id of the admin user who created it (as API keys record theirs). */
  @Prop({ required: true }) createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export const NewsletterTemplateSchema = SchemaFactory.createForClass(NewsletterTemplate);
// The app's list, newest first; lookups by id are scoped by app in the filter.
NewsletterTemplateSchema.index({ appId: 1, createdAt: -1, _id: -1 });
