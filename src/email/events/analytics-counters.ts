import { Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { createHash } from 'node:crypto';
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { Model, trusted } from 'mongoose';
import { insertedIndexes, writeAll, writeKeepingDuplicates } from '../../common/database/bulk-writes';
import { isDuplicateKey } from '../../common/database/duplicate-key';
import { isTransientDatabaseError, retryTransient } from '../../common/database/transient-retry';
import type { EmailEvent } from '../tracking/schemas/email-event.schema';
import { PRIMARY_PROVIDER } from './provider-payload';
import {
  CampaignCounters,
  CampaignRecipient,
  ContactCounters,
  DailyCounters,
  type RecentEvent,
  UniqueFlag,
} from './schemas/analytics.schemas';

/** A person view lists this many of their latest events. */
export const RECENT_EVENTS_MAX = 500;

/**
 * What the counters count. An event of type T counts as T, except automated opens and clicks (mail-privacy
 * proxies, link scanners), which count as `automatedOpened` / `automatedClicked` and never as human ones;
 * a person's first human open (click) of a campaign also counts as `uniqueOpened` (`uniqueClicked`), and a
 * hard bounce also as `hardBounced`.
 */
export type CounterName = string;

const DAY_MS = 86_400_000;
let lastDay = { number: NaN, date: '' };

/**
 * The day bucket of an instant: its UTC date. Counting formats it for every event of a batch, and nearly all
 * of them share one day: the last day's text is reused.
 */
export function dayOf(at: Date): string {
  const number = Math.floor(at.getTime() / DAY_MS);
  if (number !== lastDay.number) lastDay = { number, date: at.toISOString().slice(0, 10) };
  return lastDay.date;
}

/**
 * How many count batches a counter document remembers having applied (`applied`): a batch tried again
 * after an ambiguous failure (WRITE_RETRY: about 30 s) finds itself there unless this many other batches
 * reached the same document in between.
 */
export const APPLIED_KEPT = 200;

/** A short id of a set of ids, the same whatever their order: one count batch's (or grant's) marker. */
function markerOf(prefix: string, ids: string[]): string {
  const hash = createHash('sha256');
  for (const id of [...ids].sort()) hash.update(id).update('\0');
  return `${prefix}${hash.digest('base64url').slice(0, 22)}`;
}

/**
 * An upsert of one counter document that applies at most once per marker: the marker is pushed by the
 * same update (atomic per document), and a document that has it no longer matches, so a write tried again
 * after an ambiguous failure (applied, answer lost) is refused as a duplicate `_id` instead of counting
 * twice (docs/operations/running-on-mongodb.md, "Counters and retried writes").
 */
function once(_id: string, marker: string, update: Document): AnyBulkWriteOperation<KeyedDoc> {
  const push = (update.$push ?? {}) as Document;
  return {
    updateOne: {
      filter: { _id, applied: { $ne: marker } },
      update: { ...update, $push: { ...push, applied: { $each: [marker], $slice: -APPLIED_KEPT } } },
      upsert: true,
    },
    // The driver's types refuse $push with $slice on an index-signature document type.
  } as unknown as AnyBulkWriteOperation<KeyedDoc>;
}

/** The scope of the every-app daily buckets (app ids never contain `*`). */
export const ALL_APPS = '*';
/** The scope of service mail (no app). */
export const NO_APP = '-';

type StoredEvent = EmailEvent;

/**
 * Aggregates newly written events into the counters (docs/architecture.md "Analytics"). Called once per
 * event, right after the event's insert succeeded (EmailEventLedger), never for an event whose insert was
 * refused as a duplicate: a retried batch cannot count twice. Each counter collection gets one bulk write per
 * batch, each document's update marked with the batch (`once`), so the writes' own retries (WRITE_RETRY,
 * after the driver's) and a rerun of the same batch cannot count twice either.
 */
@Injectable()
export class AnalyticsCounters {
  private readonly logger = new Logger(AnalyticsCounters.name);

  constructor(
    @InjectModel(CampaignCounters.name) private readonly campaigns: Model<CampaignCounters>,
    @InjectModel(DailyCounters.name) private readonly daily: Model<DailyCounters>,
    @InjectModel(ContactCounters.name) private readonly contacts: Model<ContactCounters>,
    @InjectModel(CampaignRecipient.name) private readonly recipients: Model<CampaignRecipient>,
    @InjectModel(UniqueFlag.name) private readonly flags: Model<UniqueFlag>,
  ) {}

  async count(events: StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    const firsts = await this.firstHumanActions(events);
    const counted = events.map((event, i) => ({ event, names: counterNames(event, firsts.has(i)) }));
    const marker = markerOf(
      'c:',
      events.map((event) => String(event._id)),
    );
    // The campaign totals first: the recipients' slots count on the same document, created here.
    await this.countCampaigns(counted, marker);
    await Promise.all([
      this.countDays(counted, marker),
      this.countContacts(counted, marker),
      this.listRecipients(events),
    ]);
  }

  /** Indexes of the events that are a person's first human open or click of their campaign. */
  private async firstHumanActions(events: StoredEvent[]): Promise<Set<number>> {
    const candidates: { index: number; _id: string; eventId: string; at: Date }[] = [];
    const seen = new Set<string>();
    events.forEach((event, index) => {
      if (!isHumanAction(event) || !event.campaignId || !event.contactId) return;
      const _id = `${event.campaignId}:${event.contactId}:${event.type}`;
      if (seen.has(_id)) return;
      seen.add(_id);
      candidates.push({ index, _id, eventId: String(event._id), at: event.createdAt });
    });
    if (candidates.length === 0) return new Set();
    const inserted = await retryTransient(() =>
      insertedIndexes(
        this.flags.collection,
        candidates.map(({ _id, eventId, at }) => ({ _id, eventId, at })),
      ),
    );
    // A flag refused as a duplicate may be this very event's, written by an attempt whose answer was lost
    // (then retried): the flag names its event, so the person's first action still counts once.
    const refused = candidates.filter((_, i) => !inserted.has(i));
    const ours =
      refused.length === 0
        ? []
        : await this.flags
            .find({ _id: trusted({ $in: refused.map((c) => c._id) }) }, { eventId: 1 })
            .lean<{ _id: string; eventId?: string }[]>()
            .exec();
    const owner = new Map(ours.map((flag) => [flag._id, flag.eventId]));
    return new Set(
      candidates.filter((c, i) => inserted.has(i) || owner.get(c._id) === c.eventId).map((c) => c.index),
    );
  }

  private async countCampaigns(counted: Counted[], marker: string): Promise<void> {
    const updates = new Map<string, { appId: string | null; inc: Record<string, number>; set: Document }>();
    for (const { event, names } of counted) {
      if (!event.campaignId) continue;
      let update = updates.get(event.campaignId);
      if (!update) updates.set(event.campaignId, (update = { appId: event.appId, inc: {}, set: {} }));
      const day = dayOf(event.createdAt);
      for (const name of names) {
        add(update.inc, `totals.${name}`);
        add(update.inc, `daily.${day}.${name}`);
      }
      if (event.type === 'clicked' && !event.automated && typeof event.linkIndex === 'number') {
        add(update.inc, `links.${event.linkIndex}.clicks`);
        if (event.url) update.set[`links.${event.linkIndex}.url`] = event.url;
      }
    }
    await this.bulk(
      this.campaigns,
      [...updates].map(([campaignId, { appId, inc, set }]) =>
        once(campaignId, marker, {
          $inc: inc,
          ...(Object.keys(set).length > 0 ? { $set: set } : {}),
          $setOnInsert: { appId },
        }),
      ),
    );
  }

  private async countDays(counted: Counted[], marker: string): Promise<void> {
    const updates = new Map<string, { scope: string; date: string; inc: Record<string, number> }>();
    for (const { event, names } of counted) {
      const date = dayOf(event.createdAt);
      for (const scope of [event.appId ?? NO_APP, ALL_APPS]) {
        const _id = `${scope}|${date}`;
        let update = updates.get(_id);
        if (!update) updates.set(_id, (update = { scope, date, inc: {} }));
        for (const name of names) {
          add(update.inc, `totals.${name}`);
          // Per stream too, in the same document: the overview's stream figures cost no read of their own.
          if (event.stream) add(update.inc, `streams.${event.stream}.${name}`);
        }
      }
    }
    await this.bulk(
      this.daily,
      [...updates].map(([_id, { scope, date, inc }]) =>
        once(_id, marker, { $inc: inc, $setOnInsert: { scope, date } }),
      ),
    );
  }

  private async countContacts(counted: Counted[], marker: string): Promise<void> {
    const updates = new Map<string, { inc: Record<string, number>; recent: RecentEvent[] }>();
    for (const { event, names } of counted) {
      if (!event.contactId) continue;
      let update = updates.get(event.contactId);
      if (!update) updates.set(event.contactId, (update = { inc: {}, recent: [] }));
      for (const name of names) add(update.inc, `totals.${name}`);
      update.recent.push({
        _id: String(event._id),
        campaignId: event.campaignId,
        messageId: event.messageId,
        type: event.type,
        createdAt: event.createdAt,
      });
    }
    await this.bulk(
      this.contacts,
      // Only the newest RECENT_EVENTS_MAX can stay: a burst for one person (a scanner fetching one link
      // over and over) does not ship the rest to the database to be sliced off there.
      [...updates].map(([contactId, { inc, recent }]) =>
        once(contactId, marker, {
          $inc: inc,
          $push: { recent: { $each: recent.slice(-RECENT_EVENTS_MAX), $slice: -RECENT_EVENTS_MAX } },
        }),
      ),
    );
  }

  /**
   * Adds people to their campaign's recipients list (or their events to their entry): one upsert per person
   * by `_id`. A new entry (upserted now) then gets the next slots of its campaign, so a slot is taken only
   * by an entry that exists (no gaps in the pages), however many writers race.
   */
  private async listRecipients(events: StoredEvent[]): Promise<void> {
    const entries = new Map<string, CampaignRecipient>();
    for (const event of events) {
      if (!event.campaignId || !event.contactId) continue;
      const _id = `${event.campaignId}:${event.contactId}`;
      let entry = entries.get(_id);
      if (!entry) {
        entries.set(
          _id,
          (entry = {
            _id,
            campaignId: event.campaignId,
            contactId: event.contactId,
            events: [],
            lastEvent: null,
            lastEventAt: null,
          }),
        );
      }
      if (!entry.events.includes(event.type)) entry.events.push(event.type);
      if (!entry.lastEventAt || event.createdAt >= entry.lastEventAt) {
        entry.lastEvent = event.type;
        entry.lastEventAt = event.createdAt;
      }
    }
    if (entries.size === 0) return;
    const all = [...entries.values()];
    const recipients = this.recipients.collection as unknown as Collection<KeyedDoc>;
    const upsert = () =>
      writeAll(
        recipients,
        all.map((entry) => ({
          updateOne: {
            filter: { _id: entry._id },
            update: {
              $addToSet: { events: { $each: entry.events } },
              $set: { lastEvent: entry.lastEvent, lastEventAt: entry.lastEventAt },
              $setOnInsert: { campaignId: entry.campaignId, contactId: entry.contactId },
            },
            upsert: true,
          },
        })),
      );
    try {
      const result = await upsert();
      await this.giveSlots(Object.keys(result.upsertedIds).map((index) => all[Number(index)]));
    } catch (error) {
      if (!isTransientDatabaseError(error)) throw error;
      // Whether the first attempt created entries is unknown (its answer was lost): after the retry, the
      // entries without a slot are the new ones.
      await retryTransient(upsert);
      const slotless = await this.recipients
        .find(
          { _id: trusted({ $in: all.map((entry) => entry._id) }), slot: trusted({ $exists: false }) },
          {
            _id: 1,
          },
        )
        .lean<{ _id: string }[]>()
        .exec();
      const ids = new Set(slotless.map((entry) => entry._id));
      await this.giveSlots(all.filter((entry) => ids.has(entry._id)));
    }
  }

  private async giveSlots(entries: CampaignRecipient[]): Promise<void> {
    const byCampaign = new Map<string, CampaignRecipient[]>();
    for (const entry of entries) {
      const list = byCampaign.get(entry.campaignId) ?? [];
      list.push(entry);
      byCampaign.set(entry.campaignId, list);
    }
    const operations: AnyBulkWriteOperation<KeyedDoc>[] = [];
    for (const [campaignId, list] of byCampaign) {
      const first = await this.grantSlots(campaignId, list);
      list.forEach((entry, i) =>
        operations.push({
          updateOne: { filter: { _id: entry._id }, update: { $set: { slot: `${campaignId}#${first + i}` } } },
        }),
      );
    }
    await this.setSlots(operations);
  }

  /**
   * The first of `list.length` slot numbers taken from the campaign's recipients count, at most once per
   * list: the grant is marked like a count batch (`once`) and logged in `grants`, so a grant tried again
   * after an ambiguous failure reads the numbers it was given instead of taking new ones.
   */
  private async grantSlots(campaignId: string, list: CampaignRecipient[]): Promise<number> {
    const marker = markerOf(
      's:',
      list.map((entry) => entry._id),
    );
    const grant = once(campaignId, marker, {
      $inc: { recipients: list.length },
      $push: { grants: { $each: [{ marker, count: list.length }], $slice: -APPLIED_KEPT } },
    }) as unknown as { updateOne: { filter: Document; update: Document } };
    const campaigns = this.campaigns.collection as unknown as Collection<KeyedDoc>;
    try {
      const counters = await retryTransient(() =>
        campaigns.findOneAndUpdate(grant.updateOne.filter, grant.updateOne.update, {
          upsert: true,
          returnDocument: 'after',
          projection: { recipients: 1 },
        }),
      );
      return (counters!.recipients as number) - list.length + 1;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      return this.grantedFirst(campaignId, marker, list.length);
    }
  }

  /** The first slot of a grant already applied: the count minus what this grant and later ones took. */
  private async grantedFirst(campaignId: string, marker: string, count: number): Promise<number> {
    const campaigns = this.campaigns.collection as unknown as Collection<KeyedDoc>;
    const counters = await campaigns.findOne(
      { _id: campaignId },
      { projection: { recipients: 1, grants: 1 } },
    );
    const grants = (counters?.grants ?? []) as { marker: string; count: number }[];
    const at = grants.findIndex((grant) => grant.marker === marker);
    if (at < 0) throw new Error(`Campaign ${campaignId}: slot grant ${marker} is no longer logged`);
    const later = grants.slice(at + 1).reduce((sum, grant) => sum + grant.count, 0);
    return (counters!.recipients as number) - later - count + 1;
  }

  /**
   * One unordered bulk write of counter updates marked with their batch (`once`), tried again while the
   * database is unreachable or electing (WRITE_RETRY); a document refused as a duplicate had the batch
   * applied already.
   */
  private async bulk(
    model: { collection: unknown },
    operations: AnyBulkWriteOperation<KeyedDoc>[],
  ): Promise<void> {
    if (operations.length === 0) return;
    const collection = model.collection as Collection<KeyedDoc>;
    await retryTransient(() => writeKeepingDuplicates(collection, operations));
  }

  /** Slots given to new recipients: updates by `_id`, each the same whenever it is repeated. */
  private async setSlots(operations: AnyBulkWriteOperation<KeyedDoc>[]): Promise<void> {
    const collection = this.recipients.collection as unknown as Collection<KeyedDoc>;
    await retryTransient(() => writeAll(collection, operations));
  }

  /**
   * For callers that must not fail because of the counters (the event itself is stored). Each counter
   * write is retried through transient errors; one that still fails (a database down past the retries, a
   * refusal) is logged with the command that rebuilds the campaigns' counters from their stored events.
   */
  async countOrLog(events: StoredEvent[]): Promise<void> {
    try {
      await this.count(events);
    } catch (error) {
      const campaigns = [...new Set(events.map((e) => e.campaignId).filter((id) => id !== null))];
      const rebuild = campaigns.map((id) => `npm run analytics:rebuild -- --campaign ${id}`).join('; ');
      this.logger.error(
        `Analytics counters of ${events.length} event(s) not updated: ${(error as Error).message}` +
          (rebuild ? `. Rebuild them: ${rebuild}` : ''),
        (error as Error).stack,
      );
    }
  }
}

type Counted = { event: StoredEvent; names: CounterName[] };
// Documents of the counter collections: a string `_id` and any fields (the counters are dotted paths).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type KeyedDoc = { _id: string; [field: string]: any };

/** A person opening or clicking (not a proxy or scanner): the actions counted once per person as unique. */
export function isHumanAction(event: StoredEvent): boolean {
  return (event.type === 'opened' || event.type === 'clicked') && !event.automated;
}

/** The counters one event adds 1 to (see CounterName). */
export function counterNames(event: StoredEvent, firstHumanAction: boolean): CounterName[] {
  // The worker records every message it hands over as `sent`: the provider's `email.sent` for the same
  // message is stored and listed, not counted a second time.
  if (event.type === 'sent' && event.provider === PRIMARY_PROVIDER) return [];
  if (event.type === 'opened' && event.automated) return ['automatedOpened'];
  if (event.type === 'clicked' && event.automated) return ['automatedClicked'];
  const names: CounterName[] = [event.type];
  if (firstHumanAction) names.push(event.type === 'opened' ? 'uniqueOpened' : 'uniqueClicked');
  if (event.type === 'bounced' && event.bounceType === 'hard') names.push('hardBounced');
  if (event.type === 'sent' && event.resentAfterUnknown) names.push('resentAfterUnknown');
  return names;
}

function add(inc: Record<string, number>, path: string): void {
  inc[path] = (inc[path] ?? 0) + 1;
}
