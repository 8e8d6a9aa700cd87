import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { Suppression, type SuppressionReason } from './schemas/suppression.schema';

export interface SuppressInput {
  email: string;
  reason: SuppressionReason;
  source: string;
  appId?: string | null;
}

const normalise = (email: string) => email.trim().toLowerCase();

/**
 * The suppression list: checked before every send. Contacts (opt-out) and provider webhooks (hard bounce,
 * complaint) write to it; the latest reason wins, the first time is kept.
 */
@Injectable()
export class SuppressionService {
  constructor(@InjectModel(Suppression.name) private readonly suppressions: Model<Suppression>) {}

  async suppress(input: SuppressInput): Promise<Suppression> {
    return this.suppressions
      .findOneAndUpdate(
        { email: normalise(input.email) },
        { $set: { reason: input.reason, source: input.source, appId: input.appId ?? null } },
        { upsert: true, returnDocument: 'after', runValidators: true },
      )
      .lean<Suppression>()
      .orFail()
      .exec();
  }

  /** Removes an address from the list (e.g. a contact who opts in again); true when it was there. */
  async lift(email: string): Promise<boolean> {
    const { deletedCount } = await this.suppressions.deleteOne({ email: normalise(email) }).exec();
    return deletedCount > 0;
  }

  find(email: string): Promise<Suppression | null> {
    return this.suppressions
      .findOne({ email: normalise(email) })
      .lean<Suppression>()
      .exec();
  }

  async isSuppressed(email: string): Promise<boolean> {
    return (await this.find(email)) !== null;
  }

  /** The suppressed addresses among `emails` (lower-cased), with their reasons: one round trip. */
  async reasonsFor(emails: string[]): Promise<Map<string, SuppressionReason>> {
    const wanted = [...new Set(emails.map(normalise))];
    if (wanted.length === 0) return new Map();
    const found = await this.suppressions
      .find({ email: trusted({ $in: wanted }) }, { email: 1, reason: 1 })
      .lean<Pick<Suppression, 'email' | 'reason'>[]>()
      .exec();
    return new Map(found.map((entry) => [entry.email, entry.reason]));
  }
}
