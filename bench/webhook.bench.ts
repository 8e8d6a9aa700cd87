/**
 * Provider webhook benchmark: signed `email.delivered` deliveries per second on the built server against
 * bare Fastify answering the same JSON to the same POST, in one run, with the server's database commands
 * per delivery.
 *
 *   npm run bench -- webhook
 *   BENCH_BASELINE_DIST=/path/to/other/dist npm run bench -- webhook   (also that build, as "before")
 *
 * Each delivery has its own `webhook-id` (Standard Webhooks signature) and names one of 20,000 sent messages
 * (their message-ledger entries are seeded directly): 4 campaigns of 5,000 people, so the counters of a
 * campaign and of the day are shared by every delivery, as in a campaign's burst.
 */
import mongoose, { Types } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import {
  type BenchServer,
  PROJECT_ROOT,
  runScenarios,
  type Scenario,
  startBareFastify,
  startServer,
} from './http-bench';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = 50;
const MESSAGES = 20_000;
const CAMPAIGNS = 4;
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const MAIL_DOMAIN = 'bench.test';

/** Message-ledger entries of sent campaign messages; their Message-IDs. */
async function seedSentMessages(uri: string): Promise<string[]> {
  const connection = await mongoose.createConnection(uri).asPromise();
  try {
    const now = new Date();
    const campaigns = Array.from({ length: CAMPAIGNS }, () => String(new Types.ObjectId()));
    const entries = Array.from({ length: MESSAGES }, (_, i) => {
      const _id = new Types.ObjectId();
      return {
        _id,
        idempotencyKey: `bench:${i}`,
        to: `reader-${i}@${MAIL_DOMAIN}`,
        appId: 'bench-app',
        campaignId: campaigns[i % CAMPAIGNS],
        contactId: String(new Types.ObjectId()),
        messageId: `${String(_id)}@${MAIL_DOMAIN}`,
        createdAt: now,
        lastEventAt: now,
        expiresAt: new Date(now.getTime() + 30 * 86_400_000),
      };
    });
    for (let i = 0; i < entries.length; i += 5_000) {
      await connection.collection('email_messages').insertMany(entries.slice(i, i + 5_000));
    }
    return entries.map((entry) => entry.messageId);
  } finally {
    await connection.close();
  }
}

async function startTarget(label: string, dist: string, databaseUri: string): Promise<BenchServer> {
  const uri = withDatabaseName(databaseUri, `bench_webhook_${label}`);
  const server = await startServer(dist, uri, [], {
    WEBHOOK_SECRET: SECRET,
    MAIL_FROM: `Bench <news@${MAIL_DOMAIN}>`,
  });
  return server;
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const dists: [string, string][] = [['after', join(PROJECT_ROOT, 'dist')]];
  if (process.env.BENCH_BASELINE_DIST) dists.unshift(['before', resolve(process.env.BENCH_BASELINE_DIST)]);
  const targets: { label: string; server: BenchServer; messageIds: string[] }[] = [];
  const bare = await startBareFastify({
    success: true,
    processed: true,
    eventId: String(new Types.ObjectId()),
  });
  const webhook = new Webhook(SECRET);
  try {
    for (const [label, dist] of dists) {
      const server = await startTarget(label, dist, database.uri);
      const messageIds = await seedSentMessages(withDatabaseName(database.uri, `bench_webhook_${label}`));
      targets.push({ label, server, messageIds });
    }
    const delivered = (messageIds: string[]) => (n: number) => ({
      type: 'email.delivered',
      created_at: new Date().toISOString(),
      data: { email_id: messageIds[n % messageIds.length] },
    });
    const signed = (n: number, body: string) => {
      const id = `msg_bench_${n}`;
      const now = new Date();
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': webhook.sign(id, now, body),
      };
    };
    const scenarios: Scenario[] = [
      {
        name: 'bare Fastify',
        url: `${bare.baseUrl}/email-events/primary-provider`,
        method: 'POST',
        headers: {},
        body: delivered(targets[0].messageIds),
        headersOf: signed,
      },
      ...targets.map(({ label, server, messageIds }) => ({
        name: `${label} POST /email-events/primary-provider (delivered)`,
        url: `${server.baseUrl}/email-events/primary-provider`,
        method: 'POST' as const,
        headers: {},
        body: delivered(messageIds),
        headersOf: signed,
      })),
    ];
    await runScenarios(scenarios, 'bare Fastify', { connections: CONNECTIONS, durationS: DURATION_S });
  } finally {
    await Promise.all(targets.map(({ server }) => server.stop()));
    bare.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
