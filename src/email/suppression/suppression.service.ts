import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { createHmac } from 'node:crypto';
import { SecretKeys } from '../../config/secret-keys';
import { Suppression, type SuppressionReason } from './schemas/suppression.schema';

export interface SuppressInput {
  email: string;
  reason: SuppressionReason;
  source: string;
  appId?: string | null;
}

/** Reasons a person may lift by giving consent again; a bounce or a complaint is never lifted that way. */
const LIFTED_BY_CONSENT: readonly SuppressionReason[] = ['opt_out'];

/**
 * The suppression list: checked before every send. Contacts (opt-out, GDPR delete) and provider webhooks
 * (hard bounce, complaint) write to it; the latest reason wins, the first time is kept. Entries are keyed by
 * an HMAC of the address (docs/architecture.md "Suppression"), so the list holds no address in clear.
 */
@Injectable()
export class SuppressionService {
  private readonly key: Buffer;

  constructor(
    @InjectModel(Suppression.name) private readonly suppressions: Model<Suppression>,
    keys: SecretKeys,
  ) {
    this.key = keys.suppressionAddress;
  }

  /** The entry key of an address: case and surrounding spaces do not matter. */
  addressHash(email: string): string {
    return createHmac('sha256', this.key).update(email.trim().toLowerCase()).digest('hex');
  }

  async suppress(input: SuppressInput): Promise<Suppression> {
    return this.suppressions
      .findOneAndUpdate(
        { addressHash: this.addressHash(input.email) },
        { $set: { reason: input.reason, source: input.source, appId: input.appId ?? null } },
        { upsert: true, returnDocument: 'after', runValidators: true },
      )
      .lean<Suppression>()
      .orFail()
      .exec();
  }

  /**
   * Lifts an opt-out when the person gives consent again; a bounce or complaint entry stays (the mailbox
   * or the person's provider said no, not a preference). True when an entry was removed.
   */
  async liftOptOut(email: string): Promise<boolean> {
    const { deletedCount } = await this.suppressions
      .deleteOne({ addressHash: this.addressHash(email), reason: trusted({ $in: LIFTED_BY_CONSENT }) })
      .exec();
    return deletedCount > 0;
  }

  find(email: string): Promise<Suppression | null> {
    return this.suppressions
      .findOne({ addressHash: this.addressHash(email) })
      .lean<Suppression>()
      .exec();
  }

  async isSuppressed(email: string): Promise<boolean> {
    return (await this.find(email)) !== null;
  }

  /** The suppressed addresses among `emails` (lower-cased), with their reasons: one round trip. */
  async reasonsFor(emails: string[]): Promise<Map<string, SuppressionReason>> {
    const byHash = new Map<string, string>();
    for (const email of emails) byHash.set(this.addressHash(email), email.trim().toLowerCase());
    if (byHash.size === 0) return new Map();
    const found = await this.suppressions
      .find({ addressHash: trusted({ $in: [...byHash.keys()] }) }, { addressHash: 1, reason: 1 })
      .lean<Pick<Suppression, 'addressHash' | 'reason'>[]>()
      .exec();
    return new Map(found.map((entry) => [byHash.get(entry.addressHash)!, entry.reason]));
  }
}
