/**
 * Campaign benchmark, two parts in one run:
 * (a) fan-out: an in-memory dev database with BENCH_RECIPIENTS subscribers (default 100,000, inserted
 *     directly by a child process), the application context in this process (worker driven by
 *     `processDueJobs`, as in bench/email.bench.ts), a counting SMTP server in a child process. One
 *     campaign is created and sent through `CampaignsService`; reported: messages per second from the send
 *     to the campaign's `sent` status (plan, render, queue, deliver, statistics), and the peak RSS of this
 *     process (the service: planner and worker; sampled every 50 ms). Fails if a subscriber is missed or
 *     mailed twice.
 * (b) the open pixel: `GET /o/{token}.gif` on the built server against bare Fastify answering the same GIF,
 *     requests per second (bench/http-bench.ts), with one replayed token, a token per person of a sent
 *     campaign (BENCH_RECIPIENTS people, whose `sent` events a child process writes first) and a forged one.
 *
 *   npm run bench -- campaign             (BENCH_RECIPIENTS=20000 for a shorter run)
 *   BENCH_SKIP_FANOUT=1 npm run bench -- campaign   (the pixel alone)
 *   BENCH_PROFILE=1 BENCH_SKIP_FANOUT=1 npm run bench -- campaign
 *       (where the server's CPU goes on the pixel)
 *   BENCH_PROFILE=1 BENCH_SKIP_PIXEL=1 npm run bench -- campaign   (where the service's CPU goes from send to
 *                                                                 sent: a .cpuprofile and its summary)
 *   BENCH_DKIM=1 BENCH_SKIP_PIXEL=1 npm run bench -- campaign   (every message DKIM-signed: the app has a
 *                                                            verified sender domain, MAIL_FROM is on it)
 *   BENCH_HEAP_SNAPSHOT=/tmp/end.heapsnapshot BENCH_SKIP_PIXEL=1 npm run bench -- campaign
 *       (also writes a heap snapshot once the campaign is sent, after a full collection: what is still held)
 *   BENCH_BASELINE_DIR=/other/checkout BENCH_SKIP_PIXEL=1 npm run bench -- campaign
 *       (that checkout's fan-out first, then this one's, in one run: its dist/ and .bench-build/campaign/
 *       must exist, e.g. after one `npm run bench -- campaign` there)
 */
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  type CommandFailedEvent,
  type CommandStartedEvent,
  type CommandSucceededEvent,
  MongoClient,
  ObjectId,
} from 'mongodb';
import { Types, type Connection } from 'mongoose';
import { SMTPServer } from 'smtp-server';
import { LinkTokens } from '../src/common/crypto/link-token';
import { SecretKeys } from '../src/config/secret-keys';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { serverProfile } from './cpu-profile';
import { inProcessProfile } from './in-process-profile';
import { type BareServer, freePort, PROJECT_ROOT, runScenarios, startServer } from './http-bench';
import { cpuSecondsOf, devDatabasePid } from './process-cpu';

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const CONCURRENCY = process.env.EMAIL_WORKER_CONCURRENCY ?? '20';
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const SEED_CHUNK = 5_000;
/** Every message signed with the sender domain's RSA-2048 DKIM key, as an app sending as itself is. */
const DKIM = process.env.BENCH_DKIM === '1';
const DKIM_DOMAIN = 'bench.example';
const SAMPLE_MS = 50;
const GIF_BASE64 = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
const HTML =
  '<h1>Hello {{firstName}}</h1><p>This month: <a href="https://shop.example.com/sale">the sale</a>, ' +
  '<a href="https://shop.example.com/blog/1">a story</a> and <a href="https://shop.example.com/blog/2">another</a>.</p>' +
  '<p>' +
  'Some text of a newsletter. '.repeat(40) +
  '</p><p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';

/**
 * The receiving SMTP server (a child process, like a relay elsewhere): counts recipients and the messages
 * that begin with a DKIM signature (the signer puts its header first), keeps nothing else.
 */
function runCountingSmtpServer(): void {
  const received = new Map<string, number>();
  let signed = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    maxClients: 1_000,
    onData(stream, session, callback) {
      let first = true;
      stream.on('data', (chunk: Buffer) => {
        if (first && chunk.subarray(0, 15).toString('latin1') === 'DKIM-Signature:') signed += 1;
        first = false;
      });
      stream.on('end', () => {
        for (const to of session.envelope.rcptTo)
          received.set(to.address, (received.get(to.address) ?? 0) + 1);
        callback(null, 'Queued');
      });
    },
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.server.address() as AddressInfo).port }));
  process.on('message', (message) => {
    if (message === 'report') process.send!({ received: [...received], signed });
    if (message === 'close') server.close(() => process.exit(0));
  });
}

async function startCountingSmtpServer(): Promise<{
  url: string;
  child: ChildProcess;
  report(): Promise<{ received: Map<string, number>; signed: number }>;
  close(): Promise<void>;
}> {
  const child = fork(__filename, ['--smtp-server']);
  const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', resolve as never));
  return {
    url: `smtp://127.0.0.1:${port}`,
    child,
    report: () =>
      new Promise((resolve) => {
        child.once('message', (message) => {
          const report = message as { received: [string, number][]; signed: number };
          resolve({ received: new Map(report.received), signed: report.signed });
        });
        child.send('report');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send('close');
      }),
  };
}

/**
 * The subscribers, inserted by a child process: 100,000 documents built and sent from this process would
 * leave their garbage in its heap, and its RSS is the service's figure.
 */
async function seedSubscribers(): Promise<void> {
  const child = fork(__filename, ['--seed']);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`Seeding failed (exit code ${code})`);
}

/** The seeding child: inserts `RECIPIENTS` subscribers of the app `bench` into `MONGODB_URI`. */
async function runSeeder(): Promise<void> {
  const client = await new MongoClient(process.env.MONGODB_URI!).connect();
  try {
    const contacts = client.db().collection('contacts');
    const now = new Date();
    for (let offset = 0; offset < RECIPIENTS; offset += SEED_CHUNK) {
      await contacts.insertMany(
        Array.from({ length: Math.min(SEED_CHUNK, RECIPIENTS - offset) }, (_, i) => ({
          _id: new ObjectId(),
          email: `reader${offset + i}@bench.test`,
          firstName: `Reader ${offset + i}`,
          lastName: null,
          locale: null,
          tags: [],
          consent: { outreach: null, commercial: null, blog: true },
          consentHistory: [],
          subscriptions: [
            {
              appId: 'bench',
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

/**
 * Wraps `target[method]` to add up the calls and the time awaited in them. `target` is an instance, or a
 * class's prototype to add up the calls of every instance.
 */
function timed<T extends object>(target: T, method: keyof T & string): { calls: number; ms: number } {
  const time = { calls: 0, ms: 0 };
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  Object.assign(target, {
    async [method](this: T, ...args: unknown[]) {
      const started = performance.now();
      try {
        return await original.apply(this, args);
      } finally {
        time.calls += 1;
        time.ms += performance.now() - started;
      }
    },
  });
  return time;
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MB`;

/**
 * CPU used by the service, the dev database and the SMTP server, per message, and the service's database
 * commands per message (the bench's own status reads, one per worker run and four a second, included): on a
 * machine shared with other work the messages per second vary with the load, what a message costs much less.
 */
function cpuMeter(smtpPid: number | undefined, connection: Connection): () => string {
  const dbPid = devDatabasePid();
  let commands = 0;
  const count = () => (commands += 1);
  connection.getClient().on('commandStarted', count);
  const started = {
    service: process.cpuUsage(),
    db: cpuSecondsOf(dbPid),
    smtp: cpuSecondsOf(smtpPid),
  };
  return () => {
    const service = process.cpuUsage(started.service);
    const perMessage = (seconds: number | undefined) =>
      seconds === undefined ? '?' : ((seconds * 1000) / RECIPIENTS).toFixed(2);
    const db = cpuSecondsOf(dbPid);
    const smtp = cpuSecondsOf(smtpPid);
    connection.getClient().off('commandStarted', count);
    return (
      `service ${perMessage((service.user + service.system) / 1e6)}, ` +
      `dev database ${perMessage(db === undefined ? db : db - started.db!)}, ` +
      `SMTP server ${perMessage(smtp === undefined ? smtp : smtp - started.smtp!)}; ` +
      `${(commands / RECIPIENTS).toFixed(2)} db commands per message`
    );
  };
}

/** A command's shape: its name, collection and the keys its filter names (values left out). */
function commandShape(event: CommandStartedEvent): string {
  const command = event.command as Record<string, unknown>;
  const keysOf = (filter: unknown) =>
    filter && typeof filter === 'object' ? `{${Object.keys(filter).join(',')}}` : '';
  const first = (list: unknown) => (Array.isArray(list) ? (list[0] as Record<string, unknown>) : undefined);
  const filter =
    command.filter ?? first(command.updates)?.q ?? first(command.deletes)?.q ?? command.query ?? undefined;
  const pipeline = Array.isArray(command.pipeline)
    ? ` [${(command.pipeline as Record<string, unknown>[]).map((stage) => Object.keys(stage)[0]).join(' ')}]`
    : '';
  return `${event.commandName} ${String(command[event.commandName])} ${keysOf(filter)}${pipeline}`;
}

/**
 * Where the database's answers took their time, by command shape (total ms, calls): the dev database
 * scans a collection for any filter that is not exactly the keys of one of its unique indexes, so a scan
 * shows here as a shape whose time per call grows with the collection.
 */
function commandTimes(connection: Connection): () => string[] {
  const started = new Map<number, string>();
  const totals = new Map<string, { ms: number; calls: number }>();
  const client = connection.getClient();
  const onStart = (event: CommandStartedEvent) => started.set(event.requestId, commandShape(event));
  const onEnd = (event: CommandSucceededEvent | CommandFailedEvent) => {
    const shape = started.get(event.requestId);
    if (shape === undefined) return;
    started.delete(event.requestId);
    const total = totals.get(shape) ?? { ms: 0, calls: 0 };
    total.ms += event.duration;
    total.calls += 1;
    totals.set(shape, total);
  };
  client.on('commandStarted', onStart);
  client.on('commandSucceeded', onEnd);
  client.on('commandFailed', onEnd);
  return () => {
    client.off('commandStarted', onStart);
    client.off('commandSucceeded', onEnd);
    client.off('commandFailed', onEnd);
    return [...totals]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 12)
      .map(([shape, { ms, calls }]) => `${(ms / 1000).toFixed(1)} s over ${calls} calls: ${shape}`);
  };
}

/**
 * The app's sender domain, verified, with a fresh DKIM key: mail from MAIL_FROM's address is then signed
 * (docs/operations/sending-domains.md).
 */
async function verifiedSenderDomain(connection: Connection, keys: SecretKeys): Promise<void> {
  const { newDkimKey } = await import('../src/sender-domains/dkim-keys');
  await connection.collection('sender_domains').insertOne({
    domain: DKIM_DOMAIN,
    appId: 'bench',
    state: 'verified',
    dkim: await newDkimKey(keys.dkimKeySeal),
    recordStates: { dkim: 'verified' },
    createdAt: new Date(),
    updatedAt: new Date(),
  });
}

/** (a) Returns false when a recipient was missed or mailed twice (or, with BENCH_DKIM, sent unsigned). */
async function fanOut(databaseUri: string): Promise<boolean> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-campaign-'));
  const smtp = await startCountingSmtpServer();
  let peakRss = 0;
  // What the process held when its RSS peaked: V8's heap (used, reserved) and memory outside it (buffers).
  let atPeak = process.memoryUsage();
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    if (usage.rss > peakRss) [peakRss, atPeak] = [usage.rss, usage];
  }, SAMPLE_MS);
  let app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>> | undefined;
  try {
    Object.assign(process.env, {
      // Command monitoring on: the database commands per message are counted (cpuMeter).
      MONGODB_URI: `${withDatabaseName(databaseUri, 'bench_campaign')}?monitorCommands=true`,
      SMTP_URL: smtp.url,
      EMAIL_WORKER_ENABLED: 'false',
      EMAIL_WORKER_CONCURRENCY: CONCURRENCY,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      APP_SECRET: randomBytes(32).toString('hex'),
      ...(DKIM ? { MAIL_FROM: `"Bench" <news@${DKIM_DOMAIN}>` } : {}),
    });
    // As worker.ts and main.ts do at start-up: this process plays the service.
    (await import('../src/common/memory/heap-growth')).limitHeapGrowth();
    const { AppModule } = await import('../src/app.module');
    const { AppsService } = await import('../src/apps/apps.service');
    const { EmailWorker } = await import('../src/email/jobs/email-worker');
    const { EmailJobStore } = await import('../src/email/jobs/email-job.store');
    const { DueScan } = await import('../src/queue/lease-queue.store');
    const { CampaignsService } = await import('../src/newsletter/campaigns/campaigns.service');
    const { Logger } = await import('nestjs-pino');
    app = await NestFactory.createApplicationContext(await AppModule.forRoot(), { bufferLogs: true });
    app.useLogger(app.get(Logger));
    await app.init();
    const connection = app.get<Connection>(getConnectionToken());
    await Promise.all(Object.values(connection.models).map((model) => model.init()));

    await app.get(AppsService).create({ id: 'bench', name: 'Bench' });
    if (DKIM) await verifiedSenderDomain(connection, app.get(SecretKeys));
    const seedStarted = performance.now();
    await seedSubscribers();
    console.log(
      `Seeded ${RECIPIENTS} subscribers in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
    atPeak = process.memoryUsage();
    peakRss = atPeak.rss;
    const rssBefore = peakRss;

    const campaigns = app.get(CampaignsService);
    const worker = app.get(EmailWorker);
    // Where the plan's time goes: the steps it awaits, timed in place (wall time, shared with the sends). The
    // audience is one cursor read along the plan (its batches are not timed apart).
    const { EmailService } = await import('../src/email/email.service');
    const { SuppressionService } = await import('../src/email/suppression/suppression.service');
    const { CampaignPlanner } = await import('../src/newsletter/campaigns/campaign-planner');
    const steps = {
      'suppression check': timed(app.get(SuppressionService), 'reasonsFor'),
      'enqueue (insert of 500 jobs)': timed(app.get(EmailService), 'enqueueEmails'),
      checkpoint: timed(app.get(CampaignPlanner), 'checkpoint'),
      'worker: due jobs (a batch of a scan)': timed(DueScan.prototype, 'next'),
      'worker: claim': timed(app.get(EmailJobStore), 'claimMany'),
      'worker: handed marks': timed(app.get(EmailJobStore), 'markHanded'),
      'worker: record outcomes': timed(app.get(EmailJobStore), 'finish'),
    };
    const draft = await campaigns.create(
      'bench',
      { name: 'Bench', subject: 'News for {{firstName}}', htmlContent: HTML },
      'bench',
    );
    const profile = inProcessProfile();
    await profile.start();
    const cpu = cpuMeter(smtp.child.pid, connection);
    const times = commandTimes(connection);
    const started = performance.now();
    await campaigns.send('bench', String(draft._id));
    let campaign = draft;
    let planDoneMs = 0;
    const planWatch = setInterval(() => {
      void campaigns.get('bench', String(draft._id)).then((found) => {
        if (!planDoneMs && found.planned) planDoneMs = performance.now() - started;
      });
    }, 250);
    for (;;) {
      const summary = await worker.processDueJobs();
      campaign = await campaigns.get('bench', String(draft._id));
      if (campaign.status !== 'sending') break;
      if (summary.completed + summary.failed + summary.dead === 0)
        await new Promise((r) => setTimeout(r, 20));
    }
    const elapsedMs = performance.now() - started;
    const cpuPerMessage = cpu();
    const slowestShapes = times();
    const held = heldAfterFullCollection();
    clearInterval(planWatch);
    await profile.stop(join(tmpdir(), `campaign-send-${Date.now()}.cpuprofile`));
    planDoneMs ||= elapsedMs;
    const { received, signed } = await smtp.report();
    const duplicated = [...received.values()].filter((count) => count > 1).length;
    const missing = RECIPIENTS - received.size;
    const rows: [string, string][] = [
      ['recipients', String(RECIPIENTS)],
      ['worker concurrency', CONCURRENCY],
      ['campaign', `${campaign.status}, stats ${JSON.stringify(campaign.stats)}`],
      [
        'send → sent',
        `${(elapsedMs / 1000).toFixed(1)} s, ${Math.round((RECIPIENTS / elapsedMs) * 1000)} msg/s`,
      ],
      [
        'plan finished after',
        `${(planDoneMs / 1000).toFixed(1)} s (it runs beside the sends; polled every 250 ms)`,
      ],
      ['CPU ms, db commands per message', cpuPerMessage],
      [
        'SMTP received',
        `${received.size} distinct, ${duplicated} duplicated, ${missing} missing, ${signed} DKIM-signed`,
      ],
      ['RSS before send', mb(rssBefore)],
      ['peak RSS (service: planner + worker)', mb(peakRss)],
      [
        '  at the peak',
        `heap used ${mb(atPeak.heapUsed)} of ${mb(atPeak.heapTotal)}, external ${mb(atPeak.external)} ` +
          `(array buffers ${mb(atPeak.arrayBuffers)})`,
      ],
      // What the run left behind: state kept past its message shows here, growing with RECIPIENTS.
      ['heap held once sent', `${mb(held)} after a full collection`],
    ];
    for (const [step, time] of Object.entries(steps)) {
      rows.push([`  ${step}`, `${time.calls} calls, ${(time.ms / 1000).toFixed(1)} s awaited in total`]);
    }
    rows.push(['database time by command shape', '(the answers awaited, largest first)']);
    for (const line of slowestShapes) rows.push(['', line]);
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
    const signedAsAsked = !DKIM || signed === RECIPIENTS;
    return duplicated === 0 && missing === 0 && signedAsAsked && campaign.status === 'sent';
  } finally {
    clearInterval(sampler);
    await app?.close();
    await smtp.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The heap still used after a full collection (V8's `gc`, exposed for this call); with BENCH_HEAP_SNAPSHOT,
 * a snapshot of it is written there too.
 */
function heldAfterFullCollection(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const held = process.memoryUsage().heapUsed;
  if (process.env.BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
  return held;
}

/** Bare Fastify answering the same GIF with the same headers, in a process of its own. */
async function startBareGif(): Promise<BareServer> {
  const port = await freePort();
  const code = `
    const gif = Buffer.from('${GIF_BASE64}', 'base64');
    const app = require('fastify')({ routerOptions: { maxParamLength: 512 } });
    app.get('/o/:token', async (_req, reply) =>
      reply.header('content-type', 'image/gif').header('cache-control', 'no-store').send(gif));
    app.listen({ port: ${port}, host: '127.0.0.1' });`;
  const child = spawn(process.execPath, ['-e', code], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i += 1) {
    try {
      await fetch(`${baseUrl}/o/x`);
      break;
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return { baseUrl, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** What the `--seed-sent` child is told: the campaign whose `sent` events it writes, and to whom. */
interface SentCampaign {
  campaignId: string;
  appId: string;
  contactIds: string[];
}

/**
 * The state a sent campaign leaves, written as the worker writes it: one `sent` event per person through the
 * service's own event ledger (the event, the campaign's and the person's counters, the recipient entry and
 * its slot), by a child process with the application context on `MONGODB_URI`, so the pixel's first opens
 * find what they would find after a real send.
 */
async function seedSentCampaign(databaseUri: string, campaign: SentCampaign): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-pixel-seed-'));
  const child = fork(__filename, ['--seed-sent'], {
    env: {
      ...process.env,
      MONGODB_URI: databaseUri,
      EMAIL_WORKER_ENABLED: 'false',
      CHAT_WORKER_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      APP_SECRET: randomBytes(32).toString('hex'),
    },
  });
  child.send(campaign);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`Seeding the sent campaign failed (exit code ${code})`);
}

/** The `--seed-sent` child: writes the `sent` events of the campaign it is sent, SEED_CHUNK at a time. */
async function runSentSeeder(): Promise<void> {
  const campaign = await new Promise<SentCampaign>((resolve) => process.once('message', resolve as never));
  const { AppModule } = await import('../src/app.module');
  const { EmailEventLedger } = await import('../src/email/events/email-event-ledger');
  const { indexesReady } = await import('../src/database/indexes-ready');
  const app = await NestFactory.createApplicationContext(await AppModule.forRoot({ embedded: false }), {
    logger: ['error'],
  });
  try {
    await app.init();
    await indexesReady(app);
    const ledger = app.get(EmailEventLedger);
    const { campaignId, appId, contactIds } = campaign;
    for (let offset = 0; offset < contactIds.length; offset += SEED_CHUNK) {
      const now = new Date();
      await ledger.append(
        contactIds.slice(offset, offset + SEED_CHUNK).map((contactId) => ({
          _id: new Types.ObjectId(),
          appId,
          contactId,
          campaignId,
          messageId: `<${contactId}@bench.test>`,
          provider: 'smtp',
          type: 'sent' as const,
          userAgent: null,
          automated: false,
          createdAt: now,
        })),
      );
    }
  } finally {
    await app.close();
  }
}

/**
 * (b) The pixel route against bare Fastify, asked three ways: one replayed token (one person's pixel asked
 * again and again: after its first open, every request is a repeat within the replay window and records
 * nothing), a different person's token per request of a campaign that was sent to them (each a first open:
 * an event, a unique open, the person's counters and the message's tally), and a forged token (the route
 * itself: the same GIF, nothing to record). The dev database's CPU is shown beside the service's: the three
 * processes share this machine's cores.
 */
async function pixel(databaseUri: string): Promise<void> {
  const pixelDatabase = withDatabaseName(databaseUri, 'bench_pixel');
  const [campaignId, appId] = [String(new Types.ObjectId()), 'bench'];
  const contactIds = Array.from({ length: RECIPIENTS }, () => String(new Types.ObjectId()));
  const seedStarted = performance.now();
  await seedSentCampaign(pixelDatabase, { campaignId, appId, contactIds });
  console.log(
    `Seeded the sent events of ${RECIPIENTS} people in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );
  const secret = randomBytes(32).toString('hex');
  const profile = serverProfile();
  const server = await startServer(
    join(PROJECT_ROOT, 'dist'),
    pixelDatabase,
    profile.nodeArgs,
    // The access line is part of what the pixel costs, as in production (BENCH_LOG_LEVEL=warn: without it).
    { APP_SECRET: secret, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
  );
  const bare = await startBareGif();
  const tokens = new LinkTokens(new SecretKeys(secret));
  const openToken = (contactId: string) => tokens.sign('open', [campaignId, contactId, appId]);
  // The replayed token is a person's of the same campaign, not one of those the per-person scenario opens.
  const token = openToken(String(new Types.ObjectId()));
  const personPaths = contactIds.map((contactId) => `/o/${openToken(contactId)}.gif`);
  const agent = { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Thunderbird/128.0' };
  const onServer = { headers: agent, pid: server.pid, databasePid: devDatabasePid() };
  try {
    await runScenarios(
      [
        { name: 'bare Fastify GIF', url: `${bare.baseUrl}/o/${token}.gif`, headers: agent, pid: bare.pid },
        {
          name: 'GET /o/{token}.gif (one replayed token)',
          url: `${server.baseUrl}/o/${token}.gif`,
          ...onServer,
        },
        {
          name: 'GET /o/{token}.gif (a token per person of a sent campaign)',
          url: `${server.baseUrl}${personPaths[0]}`,
          path: (n) => personPaths[n % personPaths.length],
          ...onServer,
        },
        { name: 'GET /o/{token}.gif (forged token)', url: `${server.baseUrl}/o/forged.gif`, ...onServer },
      ],
      'bare Fastify GIF',
      { connections: 50, durationS: DURATION_S },
    );
  } finally {
    await server.stop();
    bare.stop();
  }
  profile.report('all pixel runs');
}

/**
 * The fan-out of another checkout (BENCH_BASELINE_DIR, its campaign bench built), run to its end before
 * this one's, so both are measured in the same session; its output is printed as it comes.
 */
function baselineFanOut(): boolean {
  const dir = resolve(process.env.BENCH_BASELINE_DIR!);
  console.log(`Baseline: the fan-out of ${dir}`);
  const { status } = spawnSync(
    process.execPath,
    [join(dir, '.bench-build/campaign/bench/campaign.bench.js')],
    {
      cwd: dir,
      stdio: 'inherit',
      env: { ...process.env, BENCH_SKIP_PIXEL: '1', BENCH_PROFILE: '', BENCH_BASELINE_DIR: '' },
    },
  );
  console.log(`This checkout's fan-out (${PROJECT_ROOT}):`);
  return status === 0;
}

async function main(): Promise<void> {
  const baselineOk =
    process.env.BENCH_BASELINE_DIR && !process.env.BENCH_SKIP_FANOUT ? baselineFanOut() : true;
  const database = await startDevDatabase();
  let ok = true;
  try {
    if (!process.env.BENCH_SKIP_FANOUT) ok = await fanOut(database.uri);
    if (!process.env.BENCH_SKIP_PIXEL) await pixel(database.uri);
  } finally {
    await database.stop();
  }
  if (!baselineOk) {
    console.error("FAILED: the baseline checkout's fan-out");
    process.exitCode = 1;
  }
  if (!ok) {
    console.error('FAILED: a subscriber was missed or mailed twice, or the campaign did not end `sent`');
    process.exitCode = 1;
  }
}

if (process.argv.includes('--smtp-server')) {
  runCountingSmtpServer();
} else if (process.argv.includes('--seed-sent')) {
  runSentSeeder().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
} else if (process.argv.includes('--seed')) {
  runSeeder().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
