/**
 * E-mail engine benchmark: starts an in-memory embedded dev database and a counting SMTP server on loopback,
 * boots the application context (worker disabled, as a test would), enqueues messages with
 * `EmailService.enqueueEmails` in chunks of 1,000, then drives `EmailWorker.processDueJobs()` until every job
 * is completed. Reports enqueue, delivery and end-to-end rates, database round trips per message and the peak
 * memory of this process and of the database JVM. Exits non-zero if a message is missing or duplicated.
 *
 *   npm run bench -- email            (BENCH_MESSAGES=20000 EMAIL_WORKER_CONCURRENCY=40 to change the sizes)
 *   BENCH_TRANSPORT=resend-api npm run bench -- email   (through the HTTP API transport to a local receiver)
 *
 * The SMTP server (or the API receiver) runs in a child process, like a relay on another host; the Node
 * figures are the worker's alone.
 */
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import type { Connection } from 'mongoose';
import { SMTPServer } from 'smtp-server';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const CONCURRENCY = process.env.EMAIL_WORKER_CONCURRENCY ?? '20';
/** `smtp` (default) or `resend-api`: which transport the worker sends through. */
const TRANSPORT = process.env.BENCH_TRANSPORT === 'resend-api' ? 'resend-api' : 'smtp';
const CHUNK = 1_000;
const SAMPLE_MS = 50;

/**
 * The receiving SMTP server runs in a child process (this file with `--smtp-server`), as a relay would on
 * another machine: its CPU does not count against the worker's event loop. It counts messages by
 * Message-ID and keeps nothing else.
 */
function runCountingSmtpServer(): void {
  const received = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    maxClients: 1_000,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const head = raw.slice(0, Math.max(0, raw.indexOf('\r\n\r\n')));
        const id = /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? '(none)';
        received.set(id, (received.get(id) ?? 0) + 1);
        callback(null, 'Queued');
      });
    },
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.server.address() as AddressInfo).port });
  });
  process.on('message', (message) => {
    if (message === 'report') process.send!({ received: [...received] });
    if (message === 'close') server.close(() => process.exit(0));
  });
}

/**
 * The API receiver (this file with `--api-receiver`): Resend's `POST /emails` as the transport sees it,
 * answering `{id}` at once; counts messages by their `Idempotency-Key` (a repeated key gets its first id).
 */
function runCountingApiReceiver(): void {
  const received = new Map<string, number>();
  const ids = new Map<string, string>();
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const key = String(request.headers['idempotency-key'] ?? '(none)');
      let id = ids.get(key);
      if (!id) {
        id = randomUUID();
        ids.set(key, id);
        received.set(key, (received.get(key) ?? 0) + 1);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as AddressInfo).port });
  });
  process.on('message', (message) => {
    if (message === 'report') process.send!({ received: [...received] });
    if (message === 'close') {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
  });
}

/** The counting receiver of the chosen transport, in a child process; counts by message. */
async function startCountingReceiver(): Promise<{
  url: string;
  child: ChildProcess;
  report(): Promise<Map<string, number>>;
  close(): Promise<void>;
}> {
  const child = fork(__filename, [TRANSPORT === 'smtp' ? '--smtp-server' : '--api-receiver']);
  const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', resolve as never));
  return {
    url: TRANSPORT === 'smtp' ? `smtp://127.0.0.1:${port}` : `http://127.0.0.1:${port}`,
    child,
    report: () =>
      new Promise((resolve) => {
        child.once('message', (message) =>
          resolve(new Map((message as { received: [string, number][] }).received)),
        );
        child.send('report');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send('close');
      }),
  };
}

/** The dev database's JVM: this process's child running the launcher's main class (Linux /proc only). */
function findDatabasePid(): number | undefined {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid !== process.pid) continue;
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('MongoDevServer')) return Number(entry);
      } catch {
        // The process ended while we looked.
      }
    }
  } catch {
    // No /proc.
  }
  return undefined;
}

/** VmRSS (now) or VmHWM (peak) in bytes from /proc/<pid>/status. */
function procMemory(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

const mb = (bytes: number | undefined) =>
  bytes === undefined ? 'n/a' : `${(bytes / 1_048_576).toFixed(0)} MB`;
const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-email-'));
  const database = await startDevDatabase();
  const smtp = await startCountingReceiver();
  const databasePid = findDatabasePid();
  let peakNodeRss = 0;
  let peakDatabaseRss = 0;
  const sampler = setInterval(() => {
    peakNodeRss = Math.max(peakNodeRss, process.memoryUsage().rss);
    if (databasePid) peakDatabaseRss = Math.max(peakDatabaseRss, procMemory(databasePid, 'VmRSS') ?? 0);
  }, SAMPLE_MS);

  let app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>> | undefined;
  let failed = false;
  try {
    // The environment AppModule.forRoot() validates; command monitoring lets us count round trips.
    Object.assign(process.env, {
      MONGODB_URI: `${withDatabaseName(database.uri, 'bench_email')}?monitorCommands=true`,
      ...(TRANSPORT === 'smtp'
        ? { SMTP_URL: smtp.url }
        : { EMAIL_TRANSPORT: 'resend-api', RESEND_API_KEY: 're_bench', RESEND_API_URL: smtp.url }),
      EMAIL_WORKER_ENABLED: 'false',
      EMAIL_WORKER_CONCURRENCY: CONCURRENCY,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      APP_SECRET: randomBytes(32).toString('hex'),
    });
    const { AppModule } = await import('../src/app.module');
    const { EmailService } = await import('../src/email/email.service');
    const { EmailWorker } = await import('../src/email/jobs/email-worker');
    const { Logger } = await import('nestjs-pino');

    const bootStarted = performance.now();
    app = await NestFactory.createApplicationContext(await AppModule.forRoot(), { bufferLogs: true });
    app.useLogger(app.get(Logger));
    await app.init();
    const connection = app.get<Connection>(getConnectionToken());
    await Promise.all(Object.values(connection.models).map((model) => model.init()));
    console.log(
      `App booted and indexes built in ${((performance.now() - bootStarted) / 1000).toFixed(1)} s ` +
        `(worker concurrency ${CONCURRENCY}, ${MESSAGES} messages, transport ${TRANSPORT})`,
    );

    // Round trips and the database's time per command, by phase.
    let commands: Record<string, { count: number; ms: number }> = {};
    const names = new Map<number, string>();
    const client = connection.getClient();
    client.on('commandStarted', (event: CommandStartedEvent) => {
      const collection = String(event.command[event.commandName] ?? '');
      names.set(event.requestId, `${event.commandName} ${collection}`.trim());
    });
    client.on('commandSucceeded', (event: CommandSucceededEvent) => {
      const key = names.get(event.requestId) ?? event.commandName;
      names.delete(event.requestId);
      const entry = (commands[key] ??= { count: 0, ms: 0 });
      entry.count += 1;
      entry.ms += event.duration;
    });

    const service = app.get(EmailService);
    const enqueueStarted = performance.now();
    for (let offset = 0; offset < MESSAGES; offset += CHUNK) {
      await service.enqueueEmails(
        Array.from({ length: Math.min(CHUNK, MESSAGES - offset) }, (_, i) => ({
          message: {
            to: `recipient${offset + i}@example.com`,
            subject: `Benchmark message ${offset + i}`,
            text: `Hello recipient ${offset + i}, this is a benchmark message.`,
            html: `<p>Hello recipient ${offset + i}, this is a <b>benchmark</b> message.</p>`,
          },
        })),
      );
    }
    const enqueueMs = performance.now() - enqueueStarted;
    const enqueueCommands = commands;
    commands = {};

    const worker = app.get(EmailWorker);
    const jobs = connection.collection('email_jobs');
    const deliveryStarted = performance.now();
    let runs = 0;
    for (;;) {
      const summary = await worker.processDueJobs();
      runs += 1;
      if ((await jobs.countDocuments({ status: 'completed' })) >= MESSAGES) break;
      if (summary.completed === 0) {
        failed = true;
        console.error(`A worker run completed nothing: ${JSON.stringify(summary)}`);
        break;
      }
    }
    const deliveryMs = performance.now() - deliveryStarted;
    const deliveryCommands = commands;

    const statuses = await jobs
      .aggregate<{ _id: string; count: number }>([{ $group: { _id: '$status', count: { $sum: 1 } } }])
      .toArray();
    // What the receiver counts by: the Message-ID header over SMTP, the idempotency key over the API.
    const completedIds = new Set(
      (await jobs.find({ status: 'completed' }, { projection: { messageId: 1 } }).toArray()).map((job) =>
        TRANSPORT === 'smtp' ? `<${String(job.messageId)}>` : `email-job/${String(job._id)}`,
      ),
    );
    const received = await smtp.report();
    const total = [...received.values()].reduce((sum, count) => sum + count, 0);
    const duplicated = [...received].filter(([, count]) => count > 1).length;
    const missing = [...completedIds].filter((id) => !received.has(id)).length;
    const unexpected = [...received.keys()].filter((id) => !completedIds.has(id)).length;
    const jobsMissing = MESSAGES - completedIds.size;
    if (total !== MESSAGES || duplicated || missing || unexpected || jobsMissing) failed = true;

    const perMessage = (table: Record<string, { count: number; ms: number }>) =>
      Object.entries(table)
        .sort(([, a], [, b]) => b.count - a.count)
        .map(
          ([name, { count, ms }]) =>
            `${name} ×${(count / MESSAGES).toFixed(3)} (${(ms / count).toFixed(1)} ms)`,
        )
        .join(', ');
    const rows: [string, string][] = [
      ['messages', String(MESSAGES)],
      ['worker concurrency', CONCURRENCY],
      ['transport', TRANSPORT],
      ['enqueue', `${(enqueueMs / 1000).toFixed(2)} s, ${rate(MESSAGES, enqueueMs)} msg/s`],
      [
        'delivery',
        `${(deliveryMs / 1000).toFixed(2)} s, ${rate(MESSAGES, deliveryMs)} msg/s (${runs} run(s))`,
      ],
      [
        'end to end',
        `${((enqueueMs + deliveryMs) / 1000).toFixed(2)} s, ${rate(MESSAGES, enqueueMs + deliveryMs)} msg/s`,
      ],
      [
        'received',
        `${total} (distinct ${received.size}, duplicated ${duplicated}, missing ${missing}, unexpected ${unexpected})`,
      ],
      ['job statuses', JSON.stringify(Object.fromEntries(statuses.map((s) => [s._id, s.count])))],
      ['peak RSS node', `${mb(peakNodeRss)} (sampled every ${SAMPLE_MS} ms; worker process only)`],
      [
        'peak RSS database JVM',
        databasePid
          ? `${mb(peakDatabaseRss)} sampled, ${mb(procMemory(databasePid, 'VmHWM'))} high-water mark`
          : 'n/a',
      ],
      ['round trips/message, enqueue', perMessage(enqueueCommands)],
      ['round trips/message, delivery', perMessage(deliveryCommands)],
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
    console.log(
      JSON.stringify({
        messages: MESSAGES,
        concurrency: Number(CONCURRENCY),
        transport: TRANSPORT,
        enqueuePerSecond: rate(MESSAGES, enqueueMs),
        deliveryPerSecond: rate(MESSAGES, deliveryMs),
        endToEndPerSecond: rate(MESSAGES, enqueueMs + deliveryMs),
        received: total,
        duplicated,
        missing: missing + jobsMissing,
        peakRssNodeMb: Math.round(peakNodeRss / 1_048_576),
        peakRssDatabaseMb: databasePid ? Math.round(peakDatabaseRss / 1_048_576) : null,
      }),
    );
    if (failed) console.error('FAILED: messages missing, duplicated or not completed');
  } finally {
    clearInterval(sampler);
    await app?.close();
    await smtp.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

if (process.argv.includes('--smtp-server')) {
  runCountingSmtpServer();
} else if (process.argv.includes('--api-receiver')) {
  runCountingApiReceiver();
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
