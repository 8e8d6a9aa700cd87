import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { Model, trusted } from 'mongoose';
import { retryTransient } from '../../common/database/transient-retry';
import { EmailEvent } from '../tracking/schemas/email-event.schema';
import { counterNames, dayOf, isHumanAction } from './analytics-counters';
import { PRIMARY_PROVIDER } from './provider-payload';
import { CampaignCounters, CampaignRecipient, type Counts, UniqueFlag } from './schemas/analytics.schemas';
import { writeAll } from '../../common/database/bulk-writes';

/** What a rebuild found and wrote. */
export interface CampaignRebuildReport {
  campaignId: string;
  events: number;
  totals: Counts;
  recipients: number;
  uniqueFlags: number;
}

/** Recipients and flags are written in batches of this size. */
const WRITE_BATCH = 1_000;

/** A campaign's counters as the stored events make them, built in memory in event order. */
interface Rebuilt {
  counters: CampaignCounters;
  recipients: CampaignRecipient[];
  flags: UniqueFlag[];
  events: number;
}

/**
 * Rebuilds one campaign's analytics (its totals, per-day counts, link clicks, recipients list and unique
 * open/click flags) from its stored events, the same way AnalyticsCounters counts them live, and replaces
 * what is stored. For counters that lost an update (a write that failed past its retries): the events are
 * the record, the counters a summary of them. The app-wide daily counters and the per-person counters span
 * campaigns and are left as they are. Events that arrive while it runs may be missed by the rebuilt
 * counters: run it on a campaign whose mail has gone out (`npm run analytics:rebuild -- --campaign <id>`).
 */
@Injectable()
export class CampaignCountersRebuild {
  constructor(
    @InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>,
    @InjectModel(CampaignCounters.name) private readonly campaigns: Model<CampaignCounters>,
    @InjectModel(CampaignRecipient.name) private readonly recipients: Model<CampaignRecipient>,
    @InjectModel(UniqueFlag.name) private readonly flags: Model<UniqueFlag>,
  ) {}

  /**
   * The reconciler of a finished campaign (CampaignProgress): the worker writes each `sent` event before
   * the outcome of its job, and counts it right after; a kill or an outage between the two leaves the event
   * uncounted (a retry finds it written and does not count it again). When the counted `sent` total differs
   * from the worker's `sent` events stored, the campaign's counters are rebuilt from its events. Two
   * lookups when they agree (the usual case). Returns whether it rebuilt.
   */
  async reconcileSent(campaignId: string): Promise<boolean> {
    const [counters, stored] = await Promise.all([
      this.campaigns.findById(campaignId, { 'totals.sent': 1 }).lean<CampaignCounters>().exec(),
      this.events
        .countDocuments({ campaignId, type: 'sent', provider: trusted({ $ne: PRIMARY_PROVIDER }) })
        .exec(),
    ]);
    if ((counters?.totals?.sent ?? 0) === stored) return false;
    await this.rebuild(campaignId);
    return true;
  }

  async rebuild(campaignId: string): Promise<CampaignRebuildReport> {
    const rebuilt = await this.fold(campaignId);
    const campaigns = this.campaigns.collection as unknown as Collection<{ _id: string }>;
    await retryTransient(() => campaigns.replaceOne({ _id: campaignId }, rebuilt.counters, { upsert: true }));
    await this.replaceAll(this.recipients.collection, { campaignId }, rebuilt.recipients);
    // Flag ids start with the campaign id (24 hex digits), so the prefix needs no escaping.
    await this.replaceAll(this.flags.collection, { _id: { $regex: `^${campaignId}:` } }, rebuilt.flags);
    return {
      campaignId,
      events: rebuilt.events,
      totals: rebuilt.counters.totals,
      recipients: rebuilt.recipients.length,
      uniqueFlags: rebuilt.flags.length,
    };
  }

  /** Reads the campaign's events in the order they were stored and counts them as AnalyticsCounters does. */
  private async fold(campaignId: string): Promise<Rebuilt> {
    const counters: CampaignCounters = {
      _id: campaignId,
      appId: null,
      totals: {},
      daily: {},
      links: {},
      recipients: 0,
    };
    const people = new Map<string, CampaignRecipient>();
    const flags = new Map<string, UniqueFlag>();
    let events = 0;
    const cursor = this.events
      .find({ campaignId })
      .sort({ createdAt: 1, _id: 1 })
      .lean<EmailEvent>()
      .cursor({ batchSize: WRITE_BATCH });
    for await (const event of cursor) {
      if (events++ === 0) counters.appId = event.appId;
      let first = false;
      if (isHumanAction(event) && event.contactId) {
        const _id = `${campaignId}:${event.contactId}:${event.type}`;
        first = !flags.has(_id);
        if (first) flags.set(_id, { _id, at: event.createdAt });
      }
      const day = dayOf(event.createdAt);
      for (const name of counterNames(event, first)) {
        add(counters.totals, name);
        add((counters.daily[day] ??= {}), name);
      }
      if (event.type === 'clicked' && !event.automated && typeof event.linkIndex === 'number') {
        const link = (counters.links[event.linkIndex] ??= {});
        link.clicks = (link.clicks ?? 0) + 1;
        if (event.url) link.url = event.url;
      }
      if (event.contactId) this.listRecipient(people, campaignId, event);
    }
    // Slots in the order people first had an event, as the live count gives them.
    const recipients = [...people.values()].map((entry, i) => ({ ...entry, slot: `${campaignId}#${i + 1}` }));
    counters.recipients = recipients.length;
    return { counters, recipients, flags: [...flags.values()], events };
  }

  private listRecipient(people: Map<string, CampaignRecipient>, campaignId: string, event: EmailEvent): void {
    const contactId = event.contactId as string;
    let entry = people.get(contactId);
    if (!entry) {
      entry = {
        _id: `${campaignId}:${contactId}`,
        campaignId,
        contactId,
        events: [],
        lastEvent: null,
        lastEventAt: null,
      };
      people.set(contactId, entry);
    }
    if (!entry.events.includes(event.type)) entry.events.push(event.type);
    if (!entry.lastEventAt || event.createdAt >= entry.lastEventAt) {
      entry.lastEvent = event.type;
      entry.lastEventAt = event.createdAt;
    }
  }

  /** Removes what `filter` matches and inserts `docs` in its place, in batches. */
  private async replaceAll(
    collection: unknown,
    filter: Document,
    docs: (Document & { _id: string })[],
  ): Promise<void> {
    const target = collection as Collection<{ _id: string }>;
    await retryTransient(() => target.deleteMany(filter));
    for (let start = 0; start < docs.length; start += WRITE_BATCH) {
      const batch = docs.slice(start, start + WRITE_BATCH);
      // Upserts by `_id`, so a batch tried again after an unknown outcome writes the same documents.
      const operations: AnyBulkWriteOperation<{ _id: string }>[] = batch.map((doc) => ({
        replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true },
      }));
      await retryTransient(() => writeAll(target, operations));
    }
  }
}

function add(counts: Counts, name: string): void {
  counts[name] = (counts[name] ?? 0) + 1;
}
