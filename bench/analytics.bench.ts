/**
 * Analytics benchmark (issue 16): the latency of each analytics endpoint with 10,000 and with 1,000,000
 * stored e-mail events in the same run (the reads use the counters, so the ratio should stay near 1), and
 * the primary-provider webhook's ingestion rate with valid Standard Webhooks signatures.
 *
 *   npm run bench -- analytics
 *   BENCH_EVENTS=200000 npm run bench -- analytics   (a quicker run)
 *
 * Events are written through the service's own ingestion code (EmailEventLedger + AnalyticsCounters, the
 * code the worker, tracking and the webhook use) in batches of 5,000, straight to the database: the same
 * events and counters as ingestion produces, without an HTTP request per event. The mix per recipient:
 * sent, delivered (97%), human opens (40%, a third of them twice), automated opens (15%), clicks (10%),
 * bounces (1%); 4,000 people, campaigns of 4,000 messages spread over 30 days.
 */
import autocannon from 'autocannon';
import mongoose, { Types } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { AnalyticsCounters } from '../src/email/events/analytics-counters';
import { EmailEventLedger, type NewEmailEvent } from '../src/email/events/email-event-ledger';
import { EventRetention } from '../src/email/events/event-retention';
import {
  CampaignCounters,
  CampaignCountersSchema,
  CampaignRecipient,
  CampaignRecipientSchema,
  ContactCounters,
  ContactCountersSchema,
  DailyCounters,
  DailyCountersSchema,
  UniqueFlag,
  UniqueFlagSchema,
} from '../src/email/events/schemas/analytics.schemas';
import { EmailEvent, EmailEventSchema } from '../src/email/tracking/schemas/email-event.schema';
import {
  type BenchServer,
  clientIpOf,
  costColumns,
  costMeter,
  PROJECT_ROOT,
  startServer,
  type UnitCost,
} from './http-bench';

const TOTAL_EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const SMALL = 10_000;
const PEOPLE = 4_000;
const BATCH = 5_000;
const APP_ID = 'bench-app';
const SAMPLES = 200;
/** Requests per endpoint before timing (the server's first requests of a route are slower: JIT). */
const WARM_UP = 100;
const DAY_MS = 86_400_000;
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

const people = Array.from({ length: PEOPLE }, () => String(new Types.ObjectId()));

/** The events of one campaign, in order, `day` days before today. */
function* campaignEvents(campaignId: string, day: number): Generator<NewEmailEvent> {
  const base = Date.now() - day * DAY_MS;
  let n = 0;
  const event = (contactId: string, type: NewEmailEvent['type'], extra: Partial<NewEmailEvent> = {}) => ({
    _id: new Types.ObjectId(),
    appId: APP_ID,
    contactId,
    messageId: `campaign:${campaignId}:${contactId}`,
    campaignId,
    provider: type === 'opened' || type === 'clicked' ? 'tracking' : 'primary',
    type,
    userAgent: null,
    automated: false,
    createdAt: new Date(base + (n += 1) * 1_000),
    ...extra,
  });
  for (const [i, contactId] of people.entries()) {
    yield event(contactId, 'sent');
    if (i % 100 === 0) yield event(contactId, 'bounced', { bounceType: 'hard' });
    else if (i % 33 !== 0) yield event(contactId, 'delivered');
    if (i % 5 < 2) yield event(contactId, 'opened');
    if (i % 15 === 0) yield event(contactId, 'opened');
    if (i % 7 === 0) yield event(contactId, 'opened', { automated: true });
    if (i % 10 === 0)
      yield event(contactId, 'clicked', { linkIndex: i % 3, url: `https://shop.test/${i % 3}` });
  }
}

async function seed(ledger: EmailEventLedger, campaigns: string[], upTo: number, state: { written: number }) {
  let batch: NewEmailEvent[] = [];
  const flush = async () => {
    await ledger.append(batch);
    state.written += batch.length;
    batch = [];
  };
  while (state.written + batch.length < upTo) {
    const campaignId = String(new Types.ObjectId());
    campaigns.push(campaignId);
    for (const event of campaignEvents(campaignId, campaigns.length % 30)) {
      batch.push(event);
      if (batch.length >= BATCH) await flush();
      if (state.written + batch.length >= upTo) break;
    }
  }
  if (batch.length > 0) await flush();
}

/** Median and p95 latency of SAMPLES requests after WARM_UP, and the server's cost per timed request. */
async function latency(
  server: BenchServer,
  path: string,
): Promise<{ median: number; p95: number; cost: UnitCost }> {
  const times: number[] = [];
  let perRequest: ((units: number) => Promise<UnitCost>) | undefined;
  for (let i = 0; i < SAMPLES + WARM_UP; i++) {
    if (i === WARM_UP) perRequest = await costMeter(server);
    const started = process.hrtime.bigint();
    const res = await fetch(`${server.baseUrl}${path}`, {
      headers: { ...server.admin, 'x-forwarded-for': clientIpOf(i + 1) },
    });
    if (!res.ok) throw new Error(`${path} → ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    if (i >= WARM_UP) times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const cost = await perRequest!(SAMPLES);
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)], cost };
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const uri = withDatabaseName(database.uri, 'bench_analytics');
  const server = await startServer(join(PROJECT_ROOT, 'dist'), uri, [], {
    WEBHOOK_SECRET: SECRET,
    MAIL_FROM: 'Bench <news@bench.test>',
  });
  const connection = await mongoose.createConnection(uri).asPromise();
  try {
    const model = <T>(name: string, schema: mongoose.Schema<T>) => connection.model<T>(name, schema);
    const counters = new AnalyticsCounters(
      model(CampaignCounters.name, CampaignCountersSchema),
      model(DailyCounters.name, DailyCountersSchema),
      model(ContactCounters.name, ContactCountersSchema),
      model(CampaignRecipient.name, CampaignRecipientSchema),
      model(UniqueFlag.name, UniqueFlagSchema),
    );
    const ledger = new EmailEventLedger(
      model(EmailEvent.name, EmailEventSchema),
      counters,
      EventRetention.ofDays(400),
    );
    const campaigns: string[] = [];
    const state = { written: 0 };

    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10);
    const endpoints = (campaignId: string, contactId: string) => ({
      'campaign analytics': `/admin/email-events/analytics/campaigns/${campaignId}`,
      'campaign recipients (page 3 of 50)': `/admin/email-events/analytics/campaigns/${campaignId}/recipients?page=3&limit=50`,
      'contact analytics': `/admin/email-events/analytics/contacts/${contactId}?limit=20`,
      'overview (30 days)': `/admin/email-events/analytics/overview?from=${from}&to=${today}`,
      'campaign stats': `/admin/email-events/campaign/${campaignId}/stats`,
    });
    const measureAll = async () => {
      const results: Record<string, { median: number; p95: number; cost: UnitCost }> = {};
      for (const [name, path] of Object.entries(endpoints(campaigns[0], people[0]))) {
        results[name] = await latency(server, path);
      }
      return results;
    };

    let started = Date.now();
    await seed(ledger, campaigns, SMALL, state);
    console.log(`Seeded ${state.written} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const small = await measureAll();

    started = Date.now();
    await seed(ledger, campaigns, TOTAL_EVENTS, state);
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `Seeded up to ${state.written} events in ${seconds.toFixed(1)} s ` +
        `(${Math.round((state.written - SMALL) / seconds)} events a second through the ledger and counters)`,
    );
    const large = await measureAll();
    console.table(
      Object.keys(small).map((name) => ({
        endpoint: name,
        [`median ms @${SMALL}`]: small[name].median.toFixed(2),
        [`p95 ms @${SMALL}`]: small[name].p95.toFixed(2),
        [`median ms @${state.written}`]: large[name].median.toFixed(2),
        [`p95 ms @${state.written}`]: large[name].p95.toFixed(2),
        'ratio (medians)': (large[name].median / small[name].median).toFixed(2),
        ...costColumns(large[name].cost),
      })),
    );

    // Webhook ingestion: delivered events for messages the worker would have sent (jobs seeded directly).
    const MESSAGES = 20_000;
    const jobIds = Array.from({ length: MESSAGES }, () => new Types.ObjectId());
    const campaignId = campaigns[0];
    for (let i = 0; i < MESSAGES; i += BATCH) {
      await connection.collection('email_jobs').insertMany(
        jobIds.slice(i, i + BATCH).map((_id, j) => ({
          _id,
          type: 'email.send',
          status: 'completed',
          priority: 0,
          payload: { to: `reader-${i + j}@bench.test`, contactId: people[(i + j) % PEOPLE] },
          attempts: 1,
          maxAttempts: 5,
          idempotencyKey: `bench:${String(_id)}`,
          appId: APP_ID,
          campaignId,
          messageId: `${String(_id)}@bench.test`,
          scheduledAt: new Date(),
          createdAt: new Date(),
          updatedAt: new Date(),
        })),
      );
    }
    const webhook = new Webhook(SECRET);
    let n = 0;
    const perEvent = await costMeter(server);
    const result = await autocannon({
      url: `${server.baseUrl}/email-events/primary-provider`,
      method: 'POST',
      connections: 10,
      amount: MESSAGES,
      requests: [
        {
          setupRequest: (request) => {
            const id = `msg_${(n += 1)}`;
            const body = JSON.stringify({
              type: 'email.delivered',
              created_at: new Date().toISOString(),
              data: { email_id: `${String(jobIds[(n - 1) % MESSAGES])}@bench.test` },
            });
            const now = new Date();
            return {
              ...request,
              body,
              headers: {
                ...request.headers,
                'content-type': 'application/json',
                'x-forwarded-for': clientIpOf(n),
                'webhook-id': id,
                'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
                'webhook-signature': webhook.sign(id, now, body),
              },
            };
          },
        },
      ],
    });
    const stored = await connection
      .collection('email_events')
      .countDocuments({ provider: 'primary', type: 'delivered', webhookId: { $exists: true } });
    const { cpuUs, commands } = await perEvent(result.requests.total);
    console.log(
      `Webhook ingestion: ${MESSAGES} signed email.delivered events, ${result.requests.average.toFixed(0)} ` +
        `events a second (mean over ${result.duration.toFixed(1)} s, 10 connections), ` +
        `${result.non2xx + result.errors + result.timeouts} non-2xx or errors; ${stored} stored; ` +
        `server CPU ${Math.round(cpuUs ?? NaN)} µs/event, ${commands?.toFixed(2)} db commands/event`,
    );
  } finally {
    await connection.close();
    await server.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
