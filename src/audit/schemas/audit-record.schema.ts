import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

export const AUDIT_OUTCOMES = ['done', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/**
 * One staff action, appended once and never changed (docs/api/staff.md "Audit log"). `hash` chains it to
 * the record before it: SHA-256 of the previous hash and this record's canonical form (audit-chain.ts).
 * Ids only: an e-mail address here is the acting staff member's own, never a contact's.
 */
@Schema({ collection: 'audit_records', versionKey: false })
export class AuditRecord {
  _id: Types.ObjectId;

  /** Position in the chain: 1, 2, 3… with no gap; unique, so two writers cannot both extend one record. */
  @Prop({ required: true }) seq: number;
  @Prop({ required: true }) prevHash: string;
  @Prop({ required: true }) hash: string;

  /** When the outcome was known and the record written. */
  @Prop({ required: true }) at: Date;
  /** When the request began (its intent was written). */
  @Prop({ required: true }) startedAt: Date;

  @Prop() actorId?: string;
  @Prop() actorEmail?: string;
  @Prop() role?: string;
  /** `apiKey.create`, `contact.erase`, `auth.login`… (src/audit/audit-actions.ts). */
  @Prop({ required: true }) action: string;
  @Prop() targetType?: string;
  @Prop() targetId?: string;
  @Prop() appId?: string;
  @Prop() ip?: string;
  @Prop() requestId?: string;
  /** Names of the fields the request sent (`profile.bio`), never their values. */
  @Prop({ type: [String], default: [] }) fields: string[];
  @Prop({ type: String, enum: AUDIT_OUTCOMES, required: true }) outcome: AuditOutcome;
  /** The HTTP status answered. */
  @Prop({ required: true }) status: number;
}

export const AuditRecordSchema = SchemaFactory.createForClass(AuditRecord);

// The chain: the tip (highest seq) when appending, the walk of audit:verify, retention's prefix delete.
AuditRecordSchema.index({ seq: 1 }, { unique: true });
// GET /admin/audit-log newest first, from/to as a range on the sort key; retention's cut-off lookup.
AuditRecordSchema.index({ at: -1, _id: -1 });
// GET /admin/audit-log?actor=<user id>|<e-mail>, ?targetId=, ?appId=, ?action=: each filter leads its own
// index (the first given of AUDIT_FILTER_ORDER), the others are checked while walking it.
AuditRecordSchema.index({ actorId: 1, at: -1, _id: -1 });
AuditRecordSchema.index({ actorEmail: 1, at: -1, _id: -1 });
AuditRecordSchema.index({ targetId: 1, at: -1, _id: -1 });
AuditRecordSchema.index({ appId: 1, at: -1, _id: -1 });
AuditRecordSchema.index({ action: 1, at: -1, _id: -1 });
