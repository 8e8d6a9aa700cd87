import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Document } from 'mongodb';
import { Model, trusted, Types } from 'mongoose';
import { AppsService } from '../apps/apps.service';
import { classifyBulkWriteFailure, writeAll } from '../common/database/bulk-writes';
import { subscriptionOf } from '../contacts/contact-ledger';
import { Contact, type Subscription } from '../contacts/schemas/contact.schema';
import type { ImportResult, SkippedEntry } from './dto/subscriber.dto';
import { checkImportEntry, type ImportEntry } from './subscriber-import-entry';
import { SubscriptionSources } from './subscribers.service';

/** Values per `$in` when reading known people back. */
const READ_CHUNK = 250;

type KnownPerson = Pick<Contact, '_id' | 'email' | 'subscriptions'>;

/** Skipped entries listed in the answer; the count covers them all. */
export const SKIPPED_DETAILS_MAX = 1_000;

/**
 * The subscriber import (up to 10,000 entries per request). New addresses, the common case, cost one
 * unordered bulk insert of whole person records with an active subscription (source `import`); the unique
 * address index turns the addresses already known into per-entry duplicate-key errors. Those people are
 * read and get the subscription added in a second bulk write where they have none for the app: a person
 * who has one, active, unsubscribed or bounced, is left as they are and the entry is skipped as
 * `already_subscribed`. Consent is never changed and no ledger event is written (an import is
 * not the person's consent). Every write bumps `revision`, so a concurrent `ContactsService.change`
 * retries on the new record instead of overwriting it. Sending the same file again changes nothing.
 */
@Injectable()
export class SubscriberImport {
  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    private readonly apps: AppsService,
  ) {}

  async import(appId: string, entries: unknown[]): Promise<ImportResult> {
    await this.apps.requireApp(appId);
    const skipped: SkippedEntry[] = [];
    const accepted: { index: number; entry: ImportEntry }[] = [];
    const seen = new Set<string>();
    entries.forEach((value, index) => {
      const checked = checkImportEntry(value);
      if ('error' in checked) {
        skipped.push({ index, email: emailOf(value), reason: 'invalid', error: checked.error });
      } else if (seen.has(checked.email)) {
        skipped.push({ index, email: checked.email, reason: 'duplicate' });
      } else {
        seen.add(checked.email);
        accepted.push({ index, entry: checked });
      }
    });

    const already = accepted.length
      ? await this.write(
          appId,
          accepted.map(({ entry }) => entry),
        )
      : new Set<number>();
    for (const position of already) {
      const { index, entry } = accepted[position];
      skipped.push({ index, email: entry.email, reason: 'already_subscribed' });
    }
    const imported = accepted.length - already.size;
    skipped.sort((a, b) => a.index - b.index);
    return {
      imported,
      skipped: skipped.length,
      skippedDetails: skipped.slice(0, SKIPPED_DETAILS_MAX),
      skippedDetailsTruncated: skipped.length > SKIPPED_DETAILS_MAX,
    };
  }

  /** Writes the entries; returns the positions of those whose person already had a subscription. */
  private async write(appId: string, entries: ImportEntry[]): Promise<Set<number>> {
    const now = new Date();
    const subscription: Subscription = {
      appId,
      status: 'active',
      source: SubscriptionSources.import,
      referralUrl: null,
      subscribedAt: now,
      unsubscribedAt: null,
    };
    const known = await this.insertNew(entries, subscription, now);
    const already = new Set(known);
    const positionOf = new Map(known.map((position) => [entries[position].email, position]));
    const people = await this.read('email', [...positionOf.keys()]);
    // People who already have a subscription to the app (whatever its status) are left as they are.
    const without = people.filter((person) => !subscriptionOf(person, appId));
    if (!without.length) return already;
    // By `_id` alone, the one filter the dev database answers from an index at this volume (any further
    // condition made 10,000 updates take over a minute). Someone subscribed between the read and this write
    // would then hold two subscriptions to the app: the re-read below finds them and takes this one back.
    await writeAll(
      this.contacts,
      without.map((person) => ({
        updateOne: {
          filter: { _id: person._id },
          update: { $push: { subscriptions: subscription }, $inc: { revision: 1 }, $set: { updatedAt: now } },
        },
      })),
      { timestamps: false },
    );
    const raced: KnownPerson[] = [];
    for (const person of await this.read(
      '_id',
      without.map((p) => p._id),
    )) {
      const forApp = person.subscriptions.filter((s) => s.appId === appId);
      if (forApp.length === 1) already.delete(positionOf.get(person.email)!);
      else if (forApp.length > 1) raced.push(person);
    }
    if (raced.length) {
      await writeAll(
        this.contacts,
        raced.map((person) => ({
          updateOne: {
            filter: { _id: person._id },
            update: {
              $pull: { subscriptions: { appId, source: subscription.source, subscribedAt: now } },
              $inc: { revision: 1 },
            },
          },
        })),
        { timestamps: false },
      );
    }
    return already;
  }

  /**
   * The people with these addresses or ids, by `$in` lists of `READ_CHUNK`: the dev database's cost of one
   * `$in` grows with the square of its length (5,000 addresses at once: 1.5 s; in chunks of 500: 0.27 s).
   */
  private async read<K extends '_id' | 'email'>(key: K, values: KnownPerson[K][]): Promise<KnownPerson[]> {
    const people: KnownPerson[] = [];
    for (let start = 0; start < values.length; start += READ_CHUNK) {
      const chunk = values.slice(start, start + READ_CHUNK);
      const found = await this.contacts
        .find({ [key]: trusted({ $in: chunk }) }, { email: 1, subscriptions: 1 })
        .lean<KnownPerson[]>()
        .exec();
      people.push(...found);
    }
    return people;
  }

  /**
   * Inserts a person for each entry (one unordered bulk insert, whole records built from the schema's
   * defaults, so nothing is cast or validated 10,000 times); returns the positions of known addresses.
   * It is the `insert` command itself, not the driver's `insertMany`: when known addresses make entries
   * fail, the driver's bulk result matches every inserted document against every error (10,000 known
   * addresses: 10^8 comparisons, seconds of CPU in the request), where the command answers the failed
   * positions as they are.
   */
  private async insertNew(entries: ImportEntry[], subscription: Subscription, now: Date): Promise<number[]> {
    const blank = new this.contacts({ email: 'blank@example.com' }).toObject<Contact>();
    const people = entries.map((entry) => ({
      ...blank,
      _id: new Types.ObjectId(),
      email: entry.email,
      firstName: entry.firstName ?? null,
      locale: entry.locale ?? null,
      subscriptions: [subscription],
      revision: 1,
      createdAt: now,
      updatedAt: now,
    }));
    const answer = await this.contacts.db.db!.command({
      insert: this.contacts.collection.collectionName,
      documents: people,
      ordered: false,
    });
    return duplicateKeyPositions(answer);
  }
}

/**
 * The positions of an unordered insert's duplicate keys (bulk-writes.ts); any other refusal or a
 * write-concern failure is thrown.
 */
function duplicateKeyPositions(answer: Document): number[] {
  const failure = classifyBulkWriteFailure(answer);
  if (failure.kind === 'unknown') {
    if (answer.writeConcernError) throw new Error('Subscriber import: write concern failed');
    return [];
  }
  const [other] = failure.others;
  if (other) throw new Error(`Subscriber import: insert failed: ${other.errmsg ?? String(other.code)}`);
  return [...failure.duplicates];
}

function emailOf(value: unknown): string | null {
  const email = (value as { email?: unknown } | null)?.email;
  return typeof email === 'string' ? email.slice(0, 254) : null;
}
