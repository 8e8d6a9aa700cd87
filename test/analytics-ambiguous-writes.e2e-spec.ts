import { getModelToken } from '@nestjs/mongoose';
import { type Model, trusted, Types } from 'mongoose';
import { dayOf } from '../src/email/events/analytics-counters';
import { EmailEventLedger, type NewEmailEvent } from '../src/email/events/email-event-ledger';
import {
  CampaignCounters,
  CampaignRecipient,
  ContactCounters,
  DailyCounters,
} from '../src/email/events/schemas/analytics.schemas';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { type FaultAction, MongoFaultProxy, type SeenCommand } from './helpers/mongo-fault-proxy';

/** Written, then answered as failed: a primary that applied the write and stepped down before answering. */
const INTERRUPTED: FaultAction = {
  kind: 'rewrite',
  reply: () => ({
    ok: 0,
    code: 11602,
    codeName: 'InterruptedDueToReplStateChange',
    errmsg: 'operation was interrupted',
  }),
};

const PEOPLE = 30;
const APP = 'app-ambiguous';

/**
 * Analytics counters when a write is applied but its answer is lost, and the write is tried again
 * (docs/operations/running-on-mongodb.md, "Counters and retried writes"): through a wire-protocol proxy
 * between the service and the dev database, each counter write in turn is applied and then reported as
 * interrupted. The counts stay exact: no event counted twice, none left out.
 */
describe('Analytics counters under ambiguous write failures', () => {
  const databaseUri = process.env.MONGODB_URI!;
  let proxy: MongoFaultProxy;
  let t: TestApp;
  let fault: { matches: (command: SeenCommand) => boolean; action: FaultAction } | null = null;
  let faulted = 0;
  const model = <T>(name: string) => t.app.get<Model<T>>(getModelToken(name));

  beforeAll(async () => {
    proxy = await MongoFaultProxy.start(databaseUri, {
      onCommand: (command) => {
        if (!fault?.matches(command)) return undefined;
        const { action } = fault;
        fault = null;
        faulted += 1;
        return action;
      },
    });
    process.env.MONGODB_URI = proxy.uriFor(databaseUri);
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
    process.env.MONGODB_URI = databaseUri;
  });
  beforeEach(async () => {
    fault = null;
    faulted = 0;
    await resetDatabase(t.connection);
  });

  /** Each person of a campaign sent, delivered and opened once (one batch, as the tracking buffer writes). */
  function campaignEvents(campaignId: string): NewEmailEvent[] {
    const at = new Date('2026-04-02T10:00:00Z');
    return Array.from({ length: PEOPLE }, () => String(new Types.ObjectId())).flatMap((contactId) =>
      (['sent', 'delivered', 'opened'] as const).map((type) => ({
        _id: new Types.ObjectId(),
        appId: APP,
        contactId,
        campaignId,
        messageId: `campaign:${campaignId}:${contactId}`,
        provider: type === 'opened' ? 'tracking' : 'smtp',
        type,
        userAgent: null,
        automated: false,
        createdAt: at,
      })),
    );
  }

  async function expectExactCounts(campaignId: string, events: NewEmailEvent[]): Promise<void> {
    const once = { sent: PEOPLE, delivered: PEOPLE, opened: PEOPLE, uniqueOpened: PEOPLE };
    const counters = await model<CampaignCounters>(CampaignCounters.name).findById(campaignId).lean().exec();
    expect(counters?.totals).toEqual(once);
    expect(counters?.recipients).toBe(PEOPLE);
    const recipients = await model<CampaignRecipient>(CampaignRecipient.name)
      .find({ campaignId })
      .lean()
      .exec();
    expect(recipients.map((entry) => entry.slot).sort()).toEqual(
      Array.from({ length: PEOPLE }, (_, i) => `${campaignId}#${i + 1}`).sort(),
    );
    const day = await model<DailyCounters>(DailyCounters.name)
      .findById(`${APP}|${dayOf(events[0].createdAt)}`)
      .lean()
      .exec();
    expect(day?.totals).toEqual(once);
    const people = await model<ContactCounters>(ContactCounters.name)
      .find({ _id: trusted({ $in: events.map((event) => event.contactId) }) })
      .lean()
      .exec();
    expect(people).toHaveLength(PEOPLE);
    for (const person of people) {
      expect(person.totals).toEqual({ sent: 1, delivered: 1, opened: 1, uniqueOpened: 1 });
      expect(person.recent).toHaveLength(3);
    }
  }

  const command = (name: string, collection: string) => (seen: SeenCommand) =>
    seen.name === name && seen.collection === collection;

  it.each<[string, (seen: SeenCommand) => boolean]>([
    ['the campaign totals’ $inc', command('update', 'email_campaign_counters')],
    ['the daily totals’ $inc', command('update', 'email_daily_counters')],
    ['the per-person totals’ $inc', command('update', 'email_contact_counters')],
    ['the recipients’ slot grant (findAndModify)', command('findAndModify', 'email_campaign_counters')],
    ['the unique-open flags’ insert', command('insert', 'email_unique_flags')],
    ['the recipients list’s upsert', command('update', 'email_campaign_recipients')],
  ])('counts exactly once when %s is applied, reported interrupted and retried', async (_name, matches) => {
    const campaignId = String(new Types.ObjectId());
    const events = campaignEvents(campaignId);
    fault = { matches, action: INTERRUPTED };
    await t.app.get(EmailEventLedger).append(events);
    expect(faulted).toBe(1);
    await expectExactCounts(campaignId, events);
  });

  it('counts a lost event batch once when the caller writes it again', async () => {
    const campaignId = String(new Types.ObjectId());
    const events = campaignEvents(campaignId);
    const ledger = t.app.get(EmailEventLedger);
    // The events are written, the connection closes before the answer: the batch fails as a whole.
    fault = { matches: command('insert', 'email_events'), action: { kind: 'cut-after' } };
    await expect(ledger.append(events)).rejects.toThrow();
    expect(
      await model<CampaignCounters>(CampaignCounters.name).findById(campaignId).lean().exec(),
    ).toBeNull();
    // The caller's retry finds every event written (duplicates) and counts them, once.
    expect(await ledger.append(events)).toEqual([]);
    await expectExactCounts(campaignId, events);
    expect(await ledger.append(events)).toEqual([]);
    await expectExactCounts(campaignId, events);
  });
});
