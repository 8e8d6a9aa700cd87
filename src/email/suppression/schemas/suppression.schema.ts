import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema } from 'mongoose';

/**
 * Why an address is suppressed (docs/operations/email-delivery.md "Suppression"): a hard bounce (the mailbox
 * does not exist), a spam complaint, a staff opt-out or GDPR erasure (`opt_out`), or repeated soft bounces.
 */
export const SUPPRESSION_REASONS = ['opt_out', 'hard_bounce', 'complaint', 'soft_bounce'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** One cause of an entry: what recorded it, for which app, when. */
export interface SuppressionCause {
  source: string;
  appId: string | null;
  at: Date;
}

export type SuppressionCauses = Partial<Record<SuppressionReason, SuppressionCause>>;

/**
 * An address whose mail is stopped, wholly or for a stream (suppression-policy.ts). The address itself is
 * not stored: `addressHash` is an HMAC of it with a derived key, so an address stays suppressed after a GDPR
 * delete without the service keeping it. Each cause is held apart, so lifting one (an opt-out lifted by
 * consent, a soft bounce by a delivery) leaves the others.
 */
@Schema({ collection: 'email_suppressions', timestamps: true })
export class Suppression {
  /** HMAC-SHA256 (hex) of the lower-cased, trimmed address with the `suppression-address` key. */
  @Prop({ required: true }) addressHash: string;
  /** The causes in force, by reason. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: undefined }) causes?: SuppressionCauses;
  /**
   * An entry written before causes were kept apart had one `reason`: it is read as that cause until lifted
   * (docs/decisions/data-suppression-causes-read-time.md); new writes never set it.
   */
  @Prop({ type: String, enum: SUPPRESSION_REASONS }) reason?: SuppressionReason;
  /** Of an entry written before causes were kept apart: what recorded its `reason`. */
  @Prop() source?: string;
  @Prop({ type: String, default: undefined }) appId?: string | null;

  createdAt: Date;
  updatedAt: Date;
}

export const SuppressionSchema = SchemaFactory.createForClass(Suppression);
// Every check and write addresses one entry by its hash.
SuppressionSchema.index({ addressHash: 1 }, { unique: true });
