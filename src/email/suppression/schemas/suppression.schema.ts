import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

export const SUPPRESSION_REASONS = ['opt_out', 'hard_bounce', 'complaint'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** An address no e-mail goes to any more, whatever the app (DESIGN "Suppression"). */
@Schema({ collection: 'email_suppressions', timestamps: true })
export class Suppression {
  /** Lower-cased address. */
  @Prop({ required: true }) email: string;
  @Prop({ type: String, enum: SUPPRESSION_REASONS, required: true }) reason: SuppressionReason;
  /** What recorded it, e.g. `contacts.opt-out`, `webhook:resend`, `newsletter.unsubscribe`. */
  @Prop({ required: true }) source: string;
  @Prop({ type: String, default: null }) appId: string | null;

  createdAt: Date;
  updatedAt: Date;
}

export const SuppressionSchema = SchemaFactory.createForClass(Suppression);
SuppressionSchema.index({ email: 1 }, { unique: true });
