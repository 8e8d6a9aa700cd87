/**
 * Tickets benchmark: seeds 100,000 tickets over 5 apps into an in-memory embedded dev database, boots the
 * application exactly as main.ts does, and reports p50/p95 latency, CPU time and database commands per
 * request for the app list, a filtered and sorted app list, the global list and the statistics endpoint.
 *
 *   npm run bench -- tickets            (BENCH_TICKETS=20000 BENCH_REQUESTS=50 to change the sizes)
 *
 * The dev database has no query planner, so the figures are for comparison over time, not a pass mark.
 */
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import type { Connection } from 'mongoose';
import type { CommandStartedEvent } from 'mongodb';
import { Role } from '../src/common/auth/roles';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import {
  PRIORITY_RANK,
  STATUS_RANK,
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  TICKET_TOPICS,
} from '../src/tickets/schemas/ticket.schema';

const TICKETS = Number(process.env.BENCH_TICKETS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20);
const WARMUP = 2;
const APPS = 5;
const BATCH = 5_000;
const DAYS = 90;
const DAY_MS = 86_400_000;

const pick = <T>(values: readonly T[], i: number): T => values[i % values.length];

function ticketDocument(appId: string, i: number, now: number) {
  const status = pick(TICKET_STATUSES, i * 7);
  const priority = pick(TICKET_PRIORITIES, i * 3);
  const createdAt = new Date(now - ((i * 7_919) % (DAYS * DAY_MS)));
  const resolved = status === 'resolved' || status === 'closed';
  return {
    _id: new ObjectId(),
    appId,
    shopId: `shop-${i % 20}`,
    topic: pick(TICKET_TOPICS, i * 5),
    email: `customer${i % 5_000}@example.com`,
    subject: `Order ${i} does not arrive`,
    message: `Ticket body ${i}: the parcel has not arrived and tracking shows nothing.`,
    status,
    statusRank: STATUS_RANK[status],
    priority,
    priorityRank: PRIORITY_RANK[priority],
    attachments: [],
    messages: [],
    messageCount: 0,
    ...(resolved ? { resolvedAt: new Date(createdAt.getTime() + ((i % 72) + 1) * 3_600_000) } : {}),
    createdAt,
    updatedAt: createdAt,
    __v: 0,
  };
}

async function seed(uri: string, appIds: string[]): Promise<number> {
  const client = await MongoClient.connect(uri);
  const started = performance.now();
  try {
    const db = client.db();
    await db.collection('apps').insertMany(
      appIds.map((id) => ({
        id,
        name: id,
        publicKey: `pk_${randomBytes(24).toString('hex')}`,
        active: true,
        allowedOrigins: [],
        features: {},
        chatChannels: {},
        createdAt: new Date(),
        updatedAt: new Date(),
      })),
    );
    const now = Date.now();
    for (let offset = 0; offset < TICKETS; offset += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, TICKETS - offset) }, (_, j) =>
        ticketDocument(appIds[(offset + j) % APPS], offset + j, now),
      );
      await db.collection('tickets').insertMany(batch, { ordered: false });
    }
  } finally {
    await client.close();
  }
  return performance.now() - started;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

interface Scenario {
  name: string;
  url: string;
}

interface Result {
  scenario: string;
  requests: number;
  p50Ms: number;
  p95Ms: number;
  /** This process's CPU time per timed request: the application's, and `inject`'s small share. */
  cpuUsPerRequest: number;
  dbCommandsPerRequest: number;
  roundTripsPerRequest: Record<string, number>;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-tickets-'));
  const database = await startDevDatabase();
  const uri = withDatabaseName(database.uri, 'bench_tickets');
  const appIds = Array.from({ length: APPS }, (_, i) => `bench-app-${i + 1}`);
  let app: NestFastifyApplication | undefined;
  try {
    process.stdout.write(`Seeding ${TICKETS} tickets over ${APPS} apps… `);
    const seedMs = await seed(uri, appIds);
    console.log(`${(seedMs / 1000).toFixed(1)} s`);

    // The environment AppModule.forRoot() validates; command monitoring lets us count round trips.
    Object.assign(process.env, {
      MONGODB_URI: `${uri}?monitorCommands=true`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      EMAIL_WORKER_ENABLED: 'false',
      APP_SECRET: randomBytes(32).toString('hex'),
    });
    const { AppModule } = await import('../src/app.module');
    const { configureApp, createFastifyAdapter } = await import('../src/app.setup');
    const { TokenService } = await import('../src/auth/token.service');

    const bootStarted = performance.now();
    app = await NestFactory.create<NestFastifyApplication>(
      await AppModule.forRoot(),
      createFastifyAdapter(undefined),
      {
        bufferLogs: true,
      },
    );
    await configureApp(app);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    const connection = app.get<Connection>(getConnectionToken());
    await Promise.all(Object.values(connection.models).map((model) => model.init()));
    console.log(`App booted and indexes built in ${((performance.now() - bootStarted) / 1000).toFixed(1)} s`);

    const admin = await connection.collection('users').insertOne({
      email: 'bench@example.com',
      password: 'not-used',
      firstName: 'Bench',
      lastName: 'Admin',
      role: 'admin',
      isActive: true,
      tokenVersion: 0,
    });
    const token = await app
      .get(TokenService)
      .sign({ sub: String(admin.insertedId), role: Role.Admin, tv: 0 });

    let commands: CommandStartedEvent[] = [];
    connection.getClient().on('commandStarted', (event) => commands.push(event));

    const target = appIds[0];
    const scenarios: Scenario[] = [
      { name: 'app list (default: newest first, 20 per page)', url: `/${target}/tickets` },
      {
        name: 'app list (status + priority sort + page 3)',
        url: `/${target}/tickets?status=pending&sortBy=priority&page=3`,
      },
      { name: 'app list (search)', url: `/${target}/tickets?search=Order%2012` },
      { name: 'global list (default)', url: '/tickets' },
      { name: 'stats (default: last 30 days)', url: `/${target}/tickets/stats` },
    ];

    const results: Result[] = [];
    for (const scenario of scenarios) {
      const timings: number[] = [];
      const perCollection: Record<string, number> = {};
      let cpuMicroseconds = 0;
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        commands = [];
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        const res = await app.inject({
          method: 'GET',
          url: scenario.url,
          headers: { authorization: `Bearer ${token}` },
        });
        const elapsed = performance.now() - started;
        const cpu = process.cpuUsage(cpuBefore);
        if (res.statusCode !== 200)
          throw new Error(`${scenario.url} answered ${res.statusCode}: ${res.body}`);
        if (i < WARMUP) continue;
        timings.push(elapsed);
        cpuMicroseconds += cpu.user + cpu.system;
        for (const command of commands) {
          const collection = String(command.command[command.commandName] ?? command.commandName);
          const key = `${command.commandName} ${collection}`;
          perCollection[key] = (perCollection[key] ?? 0) + 1;
        }
      }
      timings.sort((a, b) => a - b);
      results.push({
        scenario: scenario.name,
        requests: REQUESTS,
        p50Ms: Math.round(percentile(timings, 50)),
        p95Ms: Math.round(percentile(timings, 95)),
        cpuUsPerRequest: Math.round(cpuMicroseconds / REQUESTS),
        dbCommandsPerRequest: Object.values(perCollection).reduce((sum, n) => sum + n, 0) / REQUESTS,
        roundTripsPerRequest: Object.fromEntries(
          Object.entries(perCollection).map(([key, count]) => [key, count / REQUESTS]),
        ),
      });
      const last = results[results.length - 1];
      console.log(
        `${last.scenario}: p50 ${last.p50Ms} ms, p95 ${last.p95Ms} ms, CPU ${last.cpuUsPerRequest} µs/req, ` +
          `${last.dbCommandsPerRequest} db commands/req ${JSON.stringify(last.roundTripsPerRequest)}`,
      );
    }
    console.log(
      JSON.stringify({ tickets: TICKETS, apps: APPS, requestsPerScenario: REQUESTS, results }, null, 2),
    );
  } finally {
    await app?.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
