import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import { CONSENT_CATEGORIES, type ConsentCategory } from './contact.schema';

/**
 * A consent event that left its contact's document (ConsentArchive): the contact keeps the newest
 * CONSENT_HISTORY_WINDOW, this collection the older ones (and, after a GDPR delete, all of them,
 * anonymised). Same fields as the embedded event, plus the contact.
 */
@Schema({ collection: 'contact_consent_events', versionKey: false })
export class ArchivedConsentEvent {
  /** The event's own id (or, for an event recorded before ids, one derived from its contents). */
  _id: Types.ObjectId;
  @Prop({ type: MongooseSchema.Types.ObjectId, required: true }) contactId: Types.ObjectId;
  @Prop({ type: String, enum: CONSENT_CATEGORIES, required: true }) category: ConsentCategory;
  @Prop({ type: String, default: null }) topic?: string | null;
  @Prop({ required: true }) status: boolean;
  @Prop({ type: String, default: null }) reason: string | null;
  @Prop({ required: true }) source: string;
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ required: true }) actor: string;
  @Prop({ type: String, default: null }) ip: string | null;
  @Prop({ type: String, default: null }) referralUrl: string | null;
  @Prop({ required: true }) at: Date;
}

export const ArchivedConsentEventSchema = SchemaFactory.createForClass(ArchivedConsentEvent);
// A person's history in order (export, GDPR delete): equality on the contact, sorted by time.
ArchivedConsentEventSchema.index({ contactId: 1, at: 1, _id: 1 });
