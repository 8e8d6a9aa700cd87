import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

export const SUPPRESSION_REASONS = ['opt_out', 'hard_bounce', 'complaint'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/**
 * An address no e-mail goes to any more, whatever the app (docs/architecture.md "Suppression"). The address
 * itself is not stored: `addressHash` is an HMAC of it with a derived key, so an address stays suppressed
 * after a GDPR delete without the service keeping it.
 */
@Schema({ collection: 'email_suppressions', timestamps: true })
export class Suppression {
  /** HMAC-SHA256 (hex) of the lower-cased, trimmed address with the `suppression-address` key. */
  @Prop({ required: true }) addressHash: string;
  @Prop({ type: String, enum: SUPPRESSION_REASONS, required: true }) reason: SuppressionReason;
  /** What recorded it, e.g. `contacts.opt-out`, `webhook:resend`, `contacts.gdpr-delete`. */
  @Prop({ required: true }) source: string;
  @Prop({ type: String, default: null }) appId: string | null;

  createdAt: Date;
  updatedAt: Date;
}

export const SuppressionSchema = SchemaFactory.createForClass(Suppression);
// Every check and write addresses one entry by its hash.
SuppressionSchema.index({ addressHash: 1 }, { unique: true });
