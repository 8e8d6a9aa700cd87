import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { createHmac } from 'node:crypto';
import { SecretKeys } from '../../config/secret-keys';
import {
  Suppression,
  type SuppressionCause,
  type SuppressionCauses,
  type SuppressionReason,
} from './schemas/suppression.schema';
import { blockingCause, causesOf, type MailStream, mostFinal } from './suppression-policy';

/** An address's entry as the service answers it: the most final cause in force names it. */
export interface SuppressionView extends SuppressionCause {
  addressHash: string;
  reason: SuppressionReason;
  causes: SuppressionCauses;
}

export interface SuppressInput {
  email: string;
  reason: SuppressionReason;
  source: string;
  appId?: string | null;
}

/**
 * Causes the person (or staff on their behalf) lifts by giving consent again: their own "no", and repeated
 * soft bounces (a staff action). A hard bounce or a complaint is never lifted that way.
 */
const LIFTED_BY_CONSENT: readonly SuppressionReason[] = ['opt_out', 'soft_bounce'];

const ENTRY_FIELDS = { addressHash: 1, causes: 1, reason: 1, source: 1, appId: 1, updatedAt: 1 };

/**
 * The suppression list: checked before every send, by cause and stream (suppression-policy.ts). Contacts
 * (opt-out, GDPR delete), provider webhooks, the SMTP answers and inbound bounce reports (hard and soft
 * bounces, complaints) write to it; each cause is kept apart with its first source. Entries are keyed by an
 * HMAC of the address (docs/architecture.md "Suppression"), so the list holds no address in clear.
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

  /** Records a cause; recording it again keeps the first record of it. Returns the entry as it is now. */
  async suppress(input: SuppressInput): Promise<SuppressionView> {
    const addressHash = this.addressHash(input.email);
    const cause = { source: input.source, appId: input.appId ?? null, at: new Date() };
    const path = `causes.${input.reason}`;
    // The filter keeps a recorded cause as it is; a second writer of the same cause gets E11000 on the
    // upsert (the entry exists), which means the cause is there now.
    await this.suppressions
      .updateOne(
        { addressHash, [path]: trusted({ $exists: false }) },
        { $set: { [path]: cause } },
        { upsert: true },
      )
      .exec()
      .catch((error: { code?: number }) => {
        if (error.code !== 11000) throw error;
      });
    return (await this.find(input.email))!;
  }

  /** The entry of an address with its causes in force, named by the most final one; null when none. */
  async find(email: string): Promise<SuppressionView | null> {
    const addressHash = this.addressHash(email);
    const causes = await this.causes(email);
    const reason = causes ? mostFinal(causes) : null;
    return causes && reason ? { addressHash, reason, ...causes[reason]!, causes } : null;
  }

  /**
   * Lifts an opt-out (or a soft-bounce suppression) when the person gives consent again; a bounce or
   * complaint stays (the mailbox or the person's provider said no, not a preference). True when a cause
   * was removed.
   */
  liftOptOut(email: string): Promise<boolean> {
    return this.lift(email, LIFTED_BY_CONSENT);
  }

  /** Lifts the soft-bounce suppression: a message reached the mailbox since. */
  liftSoftBounce(email: string): Promise<boolean> {
    return this.lift(email, ['soft_bounce']);
  }

  /** Lifts the soft-bounce suppressions of these addresses (delivered messages): one write. */
  async liftSoftBounces(emails: string[]): Promise<void> {
    if (emails.length === 0) return;
    await this.suppressions
      .updateMany(
        {
          addressHash: trusted({ $in: [...new Set(emails.map((email) => this.addressHash(email)))] }),
          'causes.soft_bounce': trusted({ $exists: true }),
        },
        { $unset: { 'causes.soft_bounce': '' } },
      )
      .exec();
  }

  /** The entry's causes in force, or null when the address has none. */
  async causes(email: string): Promise<SuppressionCauses | null> {
    const entry = await this.suppressions
      .findOne({ addressHash: this.addressHash(email) }, ENTRY_FIELDS)
      .lean<Suppression>()
      .exec();
    const causes = entry ? causesOf(entry) : {};
    return Object.keys(causes).length > 0 ? causes : null;
  }

  /** Whether any cause is in force (a public signup must then be confirmed). */
  async isSuppressed(email: string): Promise<boolean> {
    return (await this.causes(email)) !== null;
  }

  /** The cause that stops mail of `stream` to the address, or null when it may be sent. */
  async blocks(email: string, stream: MailStream): Promise<SuppressionReason | null> {
    const causes = await this.causes(email);
    return causes ? blockingCause(causes, stream) : null;
  }

  /** The causes in force for the suppressed addresses among `emails` (lower-cased): one round trip. */
  async causesFor(emails: string[]): Promise<Map<string, SuppressionCauses>> {
    const byHash = new Map<string, string>();
    for (const email of emails) byHash.set(this.addressHash(email), email.trim().toLowerCase());
    if (byHash.size === 0) return new Map();
    const found = await this.suppressions
      .find({ addressHash: trusted({ $in: [...byHash.keys()] }) }, ENTRY_FIELDS)
      .lean<Suppression[]>()
      .exec();
    const answer = new Map<string, SuppressionCauses>();
    for (const entry of found) {
      const causes = causesOf(entry);
      if (Object.keys(causes).length > 0) answer.set(byHash.get(entry.addressHash)!, causes);
    }
    return answer;
  }

  /** The addresses among `emails` whose mail of `stream` is stopped, with the cause: one round trip. */
  async reasonsFor(emails: string[], stream: MailStream): Promise<Map<string, SuppressionReason>> {
    const answer = new Map<string, SuppressionReason>();
    for (const [address, causes] of await this.causesFor(emails)) {
      const reason = blockingCause(causes, stream);
      if (reason) answer.set(address, reason);
    }
    return answer;
  }

  private async lift(email: string, reasons: readonly SuppressionReason[]): Promise<boolean> {
    const addressHash = this.addressHash(email);
    const unset = Object.fromEntries(reasons.map((reason) => [`causes.${reason}`, '']));
    const [modern, legacy] = await Promise.all([
      this.suppressions
        .updateOne(
          {
            addressHash,
            $or: reasons.map((reason) => ({ [`causes.${reason}`]: trusted({ $exists: true }) })),
          },
          { $unset: unset },
        )
        .exec(),
      // An entry written before causes were kept apart loses its one reason.
      this.suppressions
        .updateOne(
          { addressHash, reason: trusted({ $in: reasons }) },
          { $unset: { reason: '', source: '', appId: '' } },
        )
        .exec(),
    ]);
    return modern.modifiedCount + legacy.modifiedCount > 0;
  }
}
