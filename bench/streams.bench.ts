/**
 * Message streams benchmark: the latency of a transactional message (a magic link's path: queued without a
 * campaign) from its enqueue to its arrival at SMTP, idle and while a 10,000-person campaign sends at the
 * provider's limit, at 2 and 40 msg/s (p50/p99). The worker runs on its timers, as in production.
 *
 *   npm run bench -- streams      (BENCH_LINKS=20 BENCH_CAMPAIGN=10000 BENCH_RATES=2,40 to change the sizes)
 *
 * In-memory dev database and an SMTP server on loopback in this process (it only timestamps arrivals).
 */
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from 'mongoose';
import { SMTPServer } from 'smtp-server';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';

const LINKS = Number(process.env.BENCH_LINKS ?? 20);
const CAMPAIGN = Number(process.env.BENCH_CAMPAIGN ?? 10_000);
const RATES = (process.env.BENCH_RATES ?? '2,40').split(',').map(Number);

/** Arrival time of each message at SMTP, by recipient. */
const arrivals = new Map<string, number>();
let campaignArrivals = 0;

async function startSmtp(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('link')) arrivals.set(address.address, performance.now());
      else campaignArrivals += 1;
      callback();
    },
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => callback(null, 'Queued'));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-streams-'));
  const database = await startDevDatabase();
  const smtp = await startSmtp();
  Object.assign(process.env, {
    MONGODB_URI: withDatabaseName(database.uri, 'bench_streams'),
    SMTP_URL: smtp.url,
    EMAIL_WORKER_ENABLED: 'true',
    EMAIL_WORKER_INTERVAL_MS: '200',
    EMAIL_WORKER_CONCURRENCY: '4',
    CHAT_WORKER_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    APP_SECRET: randomBytes(32).toString('hex'),
  });
  const { AppModule } = await import('../src/app.module');
  const { EmailService } = await import('../src/email/email.service');
  const { EMAIL_WORKER_OPTIONS } = await import('../src/email/jobs/worker-options');
  const app = await NestFactory.createApplicationContext(await AppModule.forRoot(), { logger: false });
  await app.init();
  const email = app.get(EmailService);
  const options = app.get<{ ratePerSecond: number }>(EMAIL_WORKER_OPTIONS);
  const jobs = app.get<Connection>(getConnectionToken()).collection('email_jobs');

  /** Queues `LINKS` links one after another (each once the last arrived); their latencies, sorted. */
  async function links(label: string): Promise<number[]> {
    const latencies: number[] = [];
    for (let i = 0; i < LINKS; i += 1) {
      const to = `link-${label}-${i}@example.com`;
      const queued = performance.now();
      await email.enqueueEmail({ to, subject: 'Your sign-in link', text: 'Sign in' });
      while (!arrivals.has(to)) await sleep(5);
      latencies.push(arrivals.get(to)! - queued);
      await sleep(100);
    }
    return latencies.sort((a, b) => a - b);
  }
  const report = (label: string, sorted: number[]) =>
    console.log(
      `${label.padEnd(34)} p50 ${percentile(sorted, 50).toFixed(0).padStart(5)} ms   ` +
        `p99 ${percentile(sorted, 99).toFixed(0).padStart(5)} ms   max ${sorted.at(-1)!.toFixed(0)} ms`,
    );

  try {
    for (const rate of RATES) {
      options.ratePerSecond = rate;
      report(`${rate} msg/s, idle`, await links(`idle${rate}`));
      const campaignId = `bench-${rate}`;
      for (let from = 0; from < CAMPAIGN; from += 1_000) {
        await email.enqueueEmails(
          Array.from({ length: Math.min(1_000, CAMPAIGN - from) }, (_, i) => ({
            message: { to: `reader${from + i}@example.com`, campaignId, subject: 'News', text: 'Hello' },
            options: { idempotencyKey: `${campaignId}:${from + i}` },
          })),
        );
      }
      const started = campaignArrivals;
      while (campaignArrivals < started + Math.max(4, rate)) await sleep(20);
      report(`${rate} msg/s, ${CAMPAIGN}-person campaign`, await links(`busy${rate}`));
      const sent = campaignArrivals - started;
      console.log(`${''.padEnd(34)} (campaign mail sent meanwhile: ${sent})`);
      await jobs.deleteMany({ campaignId, status: { $in: ['pending', 'failed'] } });
      while ((await jobs.countDocuments({ campaignId, status: 'processing' })) > 0) await sleep(50);
    }
  } finally {
    await app.close();
    await smtp.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
