import { getModelToken } from '@nestjs/mongoose';
import { MongoNetworkError } from 'mongodb';
import { Model, Types } from 'mongoose';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EmailEventLedger, type NewEmailEvent } from '../src/email/events/email-event-ledger';
import {
  CampaignCounters,
  CampaignRecipient,
  UniqueFlag,
} from '../src/email/events/schemas/analytics.schemas';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { compileWorker, type CompiledWorker } from './helpers/worker-process';

/**
 * Campaign analytics counters under write faults: a counter write that fails transiently is retried (the
 * counts are not lost), and `npm run analytics:rebuild -- --campaign <id>` rebuilds a campaign's counters
 * from its stored events to what the live count made of them.
 */
describe('Analytics counters: retried writes and the rebuild command', () => {
  let t: TestApp;
  let ledger: EmailEventLedger;
  const appId = 'app-analytics';
  const model = <T>(name: string) => t.app.get<Model<T>>(getModelToken(name));

  beforeAll(async () => {
    t = await createTestApp();
    ledger = t.app.get(EmailEventLedger);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    jest.restoreAllMocks();
    await resetDatabase(t.connection);
  });

  const DAY1 = Date.parse('2026-03-01T10:00:00Z');
  const DAY2 = Date.parse('2026-03-02T09:00:00Z');

  /**
   * A campaign of `people` persons over two days: each sent; most delivered; some hard or soft bounced;
   * opens by people (some twice) and by a privacy proxy; clicks on two links (some by a scanner).
   */
  const campaignEvents = (campaignId: string, people: number): NewEmailEvent[] => {
    const events: NewEmailEvent[] = [];
    let tick = 0;
    const event = (
      contactId: string,
      type: NewEmailEvent['type'],
      day: number,
      extra: Partial<NewEmailEvent> = {},
    ) =>
      events.push({
        _id: new Types.ObjectId(),
        appId,
        contactId,
        messageId: `campaign:${campaignId}:${contactId}`,
        campaignId,
        provider: type === 'sent' ? 'smtp' : type === 'opened' || type === 'clicked' ? 'tracking' : 'primary',
        type,
        userAgent: null,
        automated: false,
        createdAt: new Date(day + tick++ * 1_000),
        ...extra,
      });
    for (let i = 0; i < people; i++) {
      const person = String(new Types.ObjectId());
      event(person, 'sent', DAY1);
      if (i % 10 === 0) {
        event(person, 'bounced', DAY1, { bounceType: i % 20 === 0 ? 'hard' : 'soft' });
        continue;
      }
      event(person, 'delivered', DAY1);
      if (i % 3 === 0) event(person, 'opened', DAY1, { automated: true });
      if (i % 2 === 0) event(person, 'opened', DAY1);
      if (i % 4 === 0) event(person, 'opened', DAY2);
      if (i % 5 === 0) event(person, 'clicked', DAY2, { linkIndex: 0, url: 'https://shop.test/a' });
      if (i % 7 === 0) event(person, 'clicked', DAY2, { linkIndex: 1, url: 'https://shop.test/b' });
      if (i % 9 === 0)
        event(person, 'clicked', DAY2, { linkIndex: 0, url: 'https://shop.test/a', automated: true });
    }
    return events;
  };

  /** Written through the ledger (the live path) in batches, as tracking and webhooks write them. */
  const appendLive = async (events: NewEmailEvent[], batch = 37) => {
    for (let start = 0; start < events.length; start += batch) {
      await ledger.append(events.slice(start, start + batch));
    }
  };

  /** Everything stored for one campaign's analytics, in a comparable form (slots as a set). */
  const snapshot = async (campaignId: string) => {
    const stored = await model<CampaignCounters>(CampaignCounters.name).findById(campaignId).lean().exec();
    // The counts only: `applied` and `grants` record which live write batches were applied (so a retried
    // write is not counted twice); a rebuild applies no batch.
    const { applied: _applied, grants: _grants, ...counters } = (stored ?? {}) as Record<string, unknown>;
    const recipients = await model<CampaignRecipient>(CampaignRecipient.name)
      .find({ campaignId })
      .lean()
      .exec();
    const flags = await model<UniqueFlag>(UniqueFlag.name)
      .collection.find({ _id: { $regex: `^${campaignId}:` } } as object)
      .toArray();
    return {
      counters: stored ? counters : null,
      recipients: recipients
        .map(({ _id, contactId, events, lastEvent, lastEventAt }) => ({
          _id,
          contactId,
          events: [...events].sort(),
          lastEvent,
          lastEventAt,
        }))
        .sort((a, b) => a._id.localeCompare(b._id)),
      slots: recipients.map((r) => r.slot).sort(),
      flags: flags.map((f) => f._id).sort(),
    };
  };

  it('retries a counter write that fails transiently: no counts are lost', async () => {
    const campaignId = String(new Types.ObjectId());
    const events = campaignEvents(campaignId, 40);
    const reference = String(new Types.ObjectId());
    // The same campaign's events under another id, counted without faults: what the counts must be.
    await appendLive(events.map((e) => ({ ...e, _id: new Types.ObjectId(), campaignId: reference })));

    // The campaign totals' and the recipients' writes each fail once, as in an election.
    const campaigns = model<CampaignCounters>(CampaignCounters.name).collection;
    const recipients = model<CampaignRecipient>(CampaignRecipient.name).collection;
    for (const collection of [campaigns, recipients]) {
      const bulkWrite = collection.bulkWrite.bind(collection);
      jest
        .spyOn(collection, 'bulkWrite')
        .mockImplementationOnce(() => Promise.reject(new MongoNetworkError('connection reset by peer')))
        .mockImplementation(bulkWrite);
    }
    await appendLive(events);

    const { counters, recipients: listed } = await snapshot(campaignId);
    const { counters: expected, recipients: expectedList } = await snapshot(reference);
    expect(counters?.totals).toEqual(expected?.totals);
    expect(counters?.daily).toEqual(expected?.daily);
    expect(counters?.recipients).toBe(40);
    expect(listed).toHaveLength(expectedList.length);
  });

  describe('npm run analytics:rebuild', () => {
    let compiled: CompiledWorker;
    beforeAll(async () => {
      compiled = await compileWorker();
    }, 180_000);

    it('rebuilds a campaign’s counters to what the live count made of its events', async () => {
      const campaignId = String(new Types.ObjectId());
      const other = String(new Types.ObjectId());
      await appendLive(campaignEvents(campaignId, 120));
      await appendLive(campaignEvents(other, 10));
      const live = await snapshot(campaignId);
      const otherLive = await snapshot(other);
      expect(live.counters?.totals).toMatchObject({ sent: 120, bounced: 12, hardBounced: 6, delivered: 108 });

      // Counters that lost updates: totals off, recipients and flags missing.
      await model<CampaignCounters>(CampaignCounters.name)
        .updateOne({ _id: campaignId }, { $inc: { 'totals.opened': -7 }, $unset: { 'links.1': '' } })
        .exec();
      await model<CampaignRecipient>(CampaignRecipient.name).collection.deleteMany({
        slot: { $regex: `^${campaignId}#[1-3]?[0-9]$` },
      });
      await model<UniqueFlag>(UniqueFlag.name).collection.deleteMany({
        _id: { $regex: `^${campaignId}:.*:clicked$` },
      } as object);

      const run = await runRebuild(['--campaign', campaignId]);
      expect(run.exit).toEqual({ code: 0, signal: null });
      expect(run.output).toContain(`Rebuilt the analytics counters of campaign ${campaignId}`);
      expect(run.output).toMatch(/120 recipient\(s\)/);

      expect(await snapshot(campaignId)).toEqual(live);
      expect(await snapshot(other)).toEqual(otherLive);
    }, 180_000);

    it('refuses to run without a campaign id', async () => {
      for (const args of [[], ['--campaign'], ['--campaign', 'not-an-id']]) {
        const run = await runRebuild(args);
        expect(run.exit.code).toBe(2);
        expect(run.output).toContain('Usage: npm run analytics:rebuild -- --campaign <campaignId>');
      }
    });

    const runRebuild = async (args: string[]) => {
      const script = [join('cli', 'analytics-rebuild.js'), join('src', 'cli', 'analytics-rebuild.js')]
        .map((name) => join(compiled.dir, name))
        .find((file) => existsSync(file));
      if (!script) throw new Error(`no analytics-rebuild.js in ${compiled.dir}`);
      return new Promise<{ exit: { code: number | null; signal: string | null }; output: string }>((done) => {
        const child = spawn(process.execPath, [script, ...args], {
          cwd: compiled.dir,
          env: {
            PATH: process.env.PATH ?? '',
            NODE_PATH: join(__dirname, '..', 'node_modules'),
            NODE_ENV: 'test',
            LOG_LEVEL: 'warn',
            MONGODB_URI: process.env.MONGODB_URI ?? '',
            APP_SECRET: process.env.APP_SECRET ?? '',
            DATA_DIR: process.env.DATA_DIR ?? '',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.once('exit', (code, signal) => done({ exit: { code, signal }, output }));
      });
    };
  });
});
