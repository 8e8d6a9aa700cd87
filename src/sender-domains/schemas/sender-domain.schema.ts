import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

export const SENDER_DOMAINS_COLLECTION = 'sender_domains';

export const RECORD_PURPOSES = ['dkim', 'spf', 'dmarc', 'return-path', 'tracking'] as const;
export type RecordPurpose = (typeof RECORD_PURPOSES)[number];

/**
 * `verified`: found as published; `missing`: no such record; `mismatch`: a record, another value;
 * `unknown`: the DNS servers did not answer (the domain's state is left as it was).
 */
export type RecordState = 'pending' | 'verified' | 'missing' | 'mismatch' | 'unknown';

/**
 * `pending` until dkim, spf and dmarc are found; `verified` while they are; `failed` once a re-check no
 * longer finds one of them (the domain is then neither a From domain nor signed for).
 */
export type DomainState = 'pending' | 'verified' | 'failed';

/** One DKIM key: the private half sealed with the service's key hierarchy, never stored in clear. */
export class DkimKey {
  selector: string;
  publicKey: string;
  sealedPrivateKey: string;
  createdAt: Date;
}

/** A key that signed before a rotation: its record stays published until `retiresAt`, then may go. */
export class RetiringDkimKey extends DkimKey {
  retiresAt: Date;
}

/** A domain an app sends from, with the records the operator publishes and what the last check found. */
@Schema({ collection: SENDER_DOMAINS_COLLECTION, timestamps: true })
export class SenderDomain {
  _id: Types.ObjectId;

  // Unique: a domain belongs to one app (its key signs for that app only); also serves the list's sort.
  @Prop({ required: true, unique: true, lowercase: true }) domain: string;
  @Prop({ required: true }) appId: string;
  @Prop({ required: true, default: 'pending' }) state: DomainState;
  /** The key that signs; its selector names it in DNS. */
  @Prop({ type: Object, required: true }) dkim: DkimKey;
  /** A rotation's new key: it signs once its own record is verified (docs/operations/sending-domains.md). */
  @Prop({ type: Object }) nextDkim?: DkimKey;
  /** The key the last rotation replaced, kept published for the overlap. */
  @Prop({ type: Object }) previousDkim?: RetiringDkimKey;
  /** `dkim` is the signing key's record; the others of a rotation are by selector in `keyStates`. */
  @Prop({ type: Object, default: () => ({}) }) recordStates: Partial<Record<RecordPurpose, RecordState>>;
  @Prop({ type: Object }) keyStates?: Record<string, RecordState>;
  @Prop() checkedAt?: Date;

  createdAt: Date;
  updatedAt: Date;
}

export const SenderDomainSchema = SchemaFactory.createForClass(SenderDomain);

// The sending path and the sender checks: an app's domains in one state.
SenderDomainSchema.index({ appId: 1, state: 1 });
// The periodic re-check: the domains checked longest ago first.
SenderDomainSchema.index({ checkedAt: 1 });
