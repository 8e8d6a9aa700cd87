import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * Written before an audited action runs and deleted once its record is in the chain. One left behind means
 * the process stopped (or the database went away) between the two: the action may or may not have
 * happened, and `npm run audit:verify` lists it. docs/decisions/security-audit-write-ahead-intent.md.
 */
@Schema({ collection: 'audit_intents', versionKey: false })
export class AuditIntent {
  _id: Types.ObjectId;
  @Prop({ required: true }) startedAt: Date;
  @Prop({ required: true }) action: string;
  @Prop() actorId?: string;
  @Prop() targetId?: string;
  @Prop() requestId?: string;
}

export const AuditIntentSchema = SchemaFactory.createForClass(AuditIntent);

// audit:verify lists the intents older than a request could take; retention deletes the old ones.
AuditIntentSchema.index({ startedAt: 1 });
