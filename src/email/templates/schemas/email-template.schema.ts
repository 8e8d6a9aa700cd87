import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { TEMPLATE_LIMITS } from '../template-limits';

export const TEMPLATE_LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt'] as const;
export type TemplateLanguage = (typeof TEMPLATE_LANGUAGES)[number];
/** The language every lookup falls back to. */
export const DEFAULT_LANGUAGE: TemplateLanguage = 'en';

export const NAME_MAX = 100;
export const SUBJECT_MAX = 300;
/** Per body (HTML and text): the template size limit, refused by the DTO before any compile. */
export const BODY_MAX = TEMPLATE_LIMITS.maxLength;
export const VARIABLES_MAX = 100;
/** A declared variable: a Handlebars path such as `firstName` or `order.total`. */
export const VARIABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_.]*$/;

@Schema({ _id: false })
export class TemplateSender {
  @Prop() name?: string;
  @Prop({ required: true }) email: string;
}
const TemplateSenderSchema = SchemaFactory.createForClass(TemplateSender);

/** An e-mail template of one app (`appId`) or global (`appId: null`), in one language. */
@Schema({ collection: 'email_templates', timestamps: true })
export class EmailTemplate {
  _id: Types.ObjectId;
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ required: true, trim: true, minlength: 1, maxlength: NAME_MAX }) name: string;
  @Prop({ type: String, enum: TEMPLATE_LANGUAGES, default: DEFAULT_LANGUAGE }) language: TemplateLanguage;
  @Prop({ required: true, maxlength: SUBJECT_MAX }) subject: string;
  @Prop({ required: true, maxlength: BODY_MAX }) htmlTemplate: string;
  @Prop({ required: true, maxlength: BODY_MAX }) textTemplate: string;
  @Prop({ type: [String], default: [] }) variables: string[];
  @Prop({ default: true }) isActive: boolean;
  @Prop({ default: 1, min: 1 }) version: number;
  @Prop({ type: TemplateSenderSchema }) sender?: TemplateSender;
  createdAt: Date;
  updatedAt: Date;
}

export const EmailTemplateSchema = SchemaFactory.createForClass(EmailTemplate);

// One template per scope, name and language (a duplicate is a 409). Also serves the list of a scope sorted
// by name then language, the search within a scope, and the lookups of resolveForSending.
EmailTemplateSchema.index({ appId: 1, name: 1, language: 1 }, { unique: true });
// List and categories of a scope filtered by language.
EmailTemplateSchema.index({ appId: 1, language: 1, name: 1 });
// List of a scope filtered by isActive.
EmailTemplateSchema.index({ appId: 1, isActive: 1, name: 1, language: 1 });
