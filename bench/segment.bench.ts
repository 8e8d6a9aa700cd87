/**
 * Segment benchmark: planning time and recipients of a campaign to a segment against the whole app.
 * An in-memory dev database with BENCH_SUBSCRIBERS subscribers (default 200,000, inserted directly by a
 * child process, as bench/campaign.bench.ts seeds), every other one with locale `fr`; the application context
 * in this process, its worker off. Two campaigns are planned (the `email.batch.plan` handler run directly,
 * as the worker would run it; nothing is delivered): one to the whole app, one to the segment
 * `{"locale":"fr"}` (half of them). Reported per campaign: messages queued and the plan's wall time.
 *
 *   npm run bench -- segment            (BENCH_SUBSCRIBERS=20000 for a shorter run)
 */
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import type { Connection } from 'mongoose';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 200_000);
const SEED_CHUNK = 5_000;
const APP_ID = 'bench';

/** The seeding child: `SUBSCRIBERS` active subscribers of the app, every other one French. */
async function runSeeder(): Promise<void> {
  const client = await new MongoClient(process.env.MONGODB_URI!).connect();
  try {
    const contacts = client.db().collection('contacts');
    const now = new Date();
    for (let offset = 0; offset < SUBSCRIBERS; offset += SEED_CHUNK) {
      await contacts.insertMany(
        Array.from({ length: Math.min(SEED_CHUNK, SUBSCRIBERS - offset) }, (_, i) => ({
          _id: new ObjectId(),
          email: `reader${offset + i}@bench.test`,
          firstName: `Reader ${offset + i}`,
          lastName: null,
          locale: (offset + i) % 2 === 0 ? 'fr' : 'de',
          tags: [],
          consent: { outreach: null, commercial: null, blog: true },
          consentHistory: [],
          subscriptions: [
            {
              appId: APP_ID,
              status: 'active',
              source: 'import',
              referralUrl: null,
              subscribedAt: now,
              unsubscribedAt: null,
            },
          ],
          deletedAt: null,
          revision: 0,
          createdAt: now,
          updatedAt: now,
        })),
      );
    }
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-segment-'));
  let app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>> | undefined;
  try {
    Object.assign(process.env, {
      MONGODB_URI: withDatabaseName(database.uri, 'bench_segment'),
      EMAIL_WORKER_ENABLED: 'false',
      CHAT_WORKER_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      APP_SECRET: randomBytes(32).toString('hex'),
    });
    const { AppModule } = await import('../src/app.module');
    const { AppsService } = await import('../src/apps/apps.service');
    const { CampaignsService } = await import('../src/newsletter/campaigns/campaigns.service');
    const { CampaignPlanner } = await import('../src/newsletter/campaigns/campaign-planner');
    const { SegmentsService } = await import('../src/newsletter/segments/segments.service');
    app = await NestFactory.createApplicationContext(await AppModule.forRoot(), { logger: ['warn'] });
    await app.init();
    const connection = app.get<Connection>(getConnectionToken());
    await Promise.all(Object.values(connection.models).map((model) => model.init()));
    await app.get(AppsService).create({ id: APP_ID, name: 'Bench' });

    const seedStarted = performance.now();
    const child = fork(__filename, ['--seed']);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`Seeding failed (exit code ${code})`);
    console.log(
      `Seeded ${SUBSCRIBERS} subscribers in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );

    const campaigns = app.get(CampaignsService);
    const planner = app.get(CampaignPlanner);
    const segment = await app
      .get(SegmentsService)
      .create(APP_ID, { name: 'French', filter: { locale: 'fr' } }, 'bench');
    const rows: string[] = [];
    for (const [label, segmentId] of [
      ['whole app', undefined],
      ['segment {"locale":"fr"}', String(segment._id)],
    ] as const) {
      const draft = await campaigns.create(
        APP_ID,
        { name: label, subject: 'News', htmlContent: '<p>Hi {{firstName}}</p>', segmentId },
        'bench',
      );
      const campaignId = String(draft._id);
      await campaigns.send(APP_ID, campaignId);
      const started = performance.now();
      const outcome = await planner.plan({ kind: 'campaign', appId: APP_ID, campaignId });
      const seconds = (performance.now() - started) / 1000;
      rows.push(
        `${label.padEnd(24)} ${String(outcome.enqueued).padStart(8)} queued in ${seconds.toFixed(1)} s ` +
          `(${Math.round(outcome.enqueued / seconds)} per second)`,
      );
    }
    console.log(`\nPlanning, ${SUBSCRIBERS} subscribers (wall time, dev database in memory):`);
    for (const row of rows) console.log(`  ${row}`);
  } finally {
    await app?.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--seed')) {
  runSeeder().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
