import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { type Locale, LOCALES } from '../schemas/contact.schema';

/**
 * A public signup waiting for the address holder's confirmation
 * (docs/decisions/campaigns-joinlist-consent.md). It holds what the signup asked for; the person record
 * changes only when the link is followed. One per app and address: asking again mails the same link again (at
 * most once a day) and never extends its expiry.
 */
@Schema({ collection: 'signup_confirmations', timestamps: true })
export class SignupConfirmation {
  _id: Types.ObjectId;
  @Prop({ required: true }) appId: string;
  /** Lower-cased and trimmed. */
  @Prop({ required: true }) email: string;
  @Prop({ type: String, default: null }) firstName: string | null;
  @Prop({ type: String, enum: LOCALES, default: null }) locale: Locale | null;
  /** The signup's `source` (`joinlist`, a form's own name, `api`). */
  @Prop({ required: true }) source: string;
  @Prop({ type: String, default: null }) referralUrl: string | null;
  /** When its link was last mailed (the epoch before the first mail): at most once a day. */
  @Prop({ required: true }) mailedAt: Date;
  /** Seven days after the entry was stored; the link works until then, the database removes it after. */
  @Prop({ required: true }) expiresAt: Date;

  createdAt: Date;
  updatedAt: Date;
}

export const SignupConfirmationSchema = SchemaFactory.createForClass(SignupConfirmation);
SignupConfirmationSchema.index({ appId: 1, email: 1 }, { unique: true });
// A confirmation nobody followed leaves no address behind.
SignupConfirmationSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
// GDPR delete removes the pending signups of the address.
SignupConfirmationSchema.index({ email: 1 });
