import type { Collection, Document } from 'mongodb';
import { EmailService } from '../src/email/email.service';
import { LAPSED_DELIVERY_ERROR } from '../src/email/jobs/email-job.store';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { duplicateMessageIds, startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { waitForCount } from './helpers/wait';
import {
  compileWorker,
  killAll,
  startWorker,
  waitFor,
  type CompiledWorker,
  type WorkerProcess,
  COMPILE_HOOK_MS,
} from './helpers/worker-process';

/**
 * The e-mail worker as real OS processes (`node worker.js`, compiled from src/worker.ts) sharing this test
 * file's database and a loopback SMTP server: a worker killed mid-delivery, two workers on one queue, and a
 * graceful stop. Jobs are enqueued through an in-process app whose own worker stays disabled.
 */
describe('E-mail worker processes', () => {
  let compiled: CompiledWorker | undefined;
  let t: TestApp;
  let smtp: TestSmtpServer | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    const [build, app] = await Promise.all([compileWorker(), createTestApp()]);
    compiled = build;
    t = app;
  }, COMPILE_HOOK_MS);

  afterEach(async () => {
    await killAll(workers);
    await smtp?.close();
    smtp = undefined;
    await resetDatabase(t.connection);
  });

  afterAll(async () => {
    await killAll(workers);
    await t?.close();
  });

  const jobs = (): Collection<Document> => t.connection.collection('email_jobs');

  function worker(name: string, env: Record<string, string> = {}): WorkerProcess {
    const started = startWorker(compiled!, name, {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: smtp!.url,
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      EMAIL_WORKER_INTERVAL_MS: '100',
      ...env,
    });
    workers.push(started);
    return started;
  }

  async function enqueue(count: number, tag: string): Promise<string[]> {
    const service = t.app.get(EmailService);
    const ids: string[] = [];
    for (let offset = 0; offset < count; offset += 1_000) {
      const items = Array.from({ length: Math.min(1_000, count - offset) }, (_, i) => ({
        message: {
          to: `${tag}-${offset + i}@example.com`,
          subject: `${tag} ${offset + i}`,
          text: `Message ${offset + i} of the ${tag} test`,
        },
      }));
      ids.push(...(await service.enqueueEmails(items)).map((job) => job.id));
    }
    return ids;
  }

  async function statusCounts(): Promise<Record<string, number>> {
    const groups = await jobs()
      .aggregate<{ _id: string; count: number }>([{ $group: { _id: '$status', count: { $sum: 1 } } }])
      .toArray();
    return Object.fromEntries(groups.map((group) => [group._id, group.count]));
  }

  /** The state a failed wait reports: job statuses, what the SMTP server saw, the workers' output. */
  async function describeState(): Promise<string> {
    const lines = [
      `statuses ${JSON.stringify(await statusCounts())}`,
      `SMTP received ${smtp?.received.length ?? 0}, attempts ${smtp?.attempts.length ?? 0}, ` +
        `errors ${JSON.stringify(smtp?.serverErrors.map((error) => error.message) ?? [])}`,
      ...workers.map(
        (w) => `worker ${w.name} exit ${JSON.stringify(w.exit())}, output:\n${w.output().slice(-4_000)}`,
      ),
    ];
    return lines.join('\n');
  }

  const receivedIds = (server: TestSmtpServer) => server.received.map((mail) => mail.headers['message-id']);

  it('a worker killed mid-delivery: the next one reaps its jobs as dead, nothing is delivered twice', async () => {
    smtp = await startSmtpServer();
    smtp.delayMs = 15;
    const server = smtp;
    const ids = await enqueue(300, 'crash');
    expect(new Set(ids).size).toBe(300);

    const a = worker('A', { EMAIL_WORKER_LEASE_MS: '2000' });
    await waitFor(() => server.received.length >= 60 || a.exit() !== null, {
      timeoutMs: 45_000,
      intervalMs: 5,
      describe: describeState,
    });
    expect(a.exit()).toBeNull();
    await a.kill();
    const receivedAtKill = server.received.length;

    worker('B', { EMAIL_WORKER_LEASE_MS: '2000' });
    await waitFor(
      async () =>
        (await jobs().countDocuments({ status: { $in: ['pending', 'processing', 'failed'] } })) === 0,
      {
        timeoutMs: 45_000,
        describe: describeState,
      },
    );

    const all = await jobs()
      .find({}, { projection: { status: 1, lastError: 1, messageId: 1 } })
      .toArray();
    expect(all).toHaveLength(300);
    expect(all.filter((job) => job.status !== 'completed' && job.status !== 'dead')).toEqual([]);

    expect(duplicateMessageIds(server.received)).toEqual([]);
    const received = new Map<string, number>();
    for (const id of receivedIds(server)) received.set(id, (received.get(id) ?? 0) + 1);
    const completed = all.filter((job) => job.status === 'completed');
    const dead = all.filter((job) => job.status === 'dead');
    for (const job of completed) {
      expect(job.messageId).toMatch(new RegExp(`^${String(job._id)}@`));
      expect({ job: String(job._id), times: received.get(`<${job.messageId}>`) ?? 0 }).toEqual({
        job: String(job._id),
        times: 1,
      });
    }
    for (const job of dead) expect(job.lastError).toBe(LAPSED_DELIVERY_ERROR);
    // At most what A held when it died: its slots in flight plus one unwritten batch of outcomes.
    expect(dead.length).toBeLessThan(100);
    // Only jobs handed to the transport end dead: a claimed job A never handed went back to pending and B
    // sent it. Those in doubt and never received are at most A's slots (EMAIL_WORKER_CONCURRENCY, 10).
    const receivedJobs = new Set(receivedIds(server).map((id) => id.slice(1, id.indexOf('@'))));
    expect(dead.filter((job) => !receivedJobs.has(String(job._id))).length).toBeLessThanOrEqual(10);
    expect(receivedAtKill).toBeGreaterThanOrEqual(60);
    // No SMTP server errors beyond A's connections reset when it was killed (those are not recorded).
    expect(server.serverErrors).toEqual([]);
  });

  it('two workers on one queue deliver 1,000 messages exactly once', async () => {
    smtp = await startSmtpServer();
    const server = smtp;
    await enqueue(1_000, 'pair');

    worker('A');
    worker('B');
    await waitForCount(() => jobs().countDocuments({ status: 'completed' }), 1_000, {
      describe: describeState,
    });

    expect(server.received).toHaveLength(1_000);
    expect(duplicateMessageIds(server.received)).toEqual([]);
    const received = new Set(receivedIds(server));
    const all = await jobs()
      .find({}, { projection: { status: 1, messageId: 1, result: 1 } })
      .toArray();
    expect(all).toHaveLength(1_000);
    const unmatched = all.filter(
      (job) =>
        !String(job.messageId).startsWith(`${String(job._id)}@`) ||
        job.result?.messageId !== job.messageId ||
        !received.has(`<${job.messageId}>`),
    );
    expect(unmatched).toEqual([]);
    expect(server.serverErrors).toEqual([]);
    // A thousand sends take minutes on a loaded machine: the stall check above bounds a hang.
  }, 600_000);

  it('SIGTERM: the worker stops claiming, finishes the messages in flight, records them and exits', async () => {
    smtp = await startSmtpServer();
    smtp.delayMs = 300;
    const server = smtp;
    await enqueue(100, 'graceful');

    const w = worker('graceful');
    // In flight: the server holds a message it has read but not yet answered.
    await waitFor(() => server.attempts.length > server.received.length || w.exit() !== null, {
      timeoutMs: 45_000,
      intervalMs: 5,
      describe: describeState,
    });
    expect(w.exit()).toBeNull();
    w.signal('SIGTERM');
    let exit: Awaited<WorkerProcess['exited']> | undefined;
    await waitFor(() => (exit = w.exit() ?? undefined) !== undefined, {
      timeoutMs: 30_000,
      describe: describeState,
    });
    // An orderly shutdown exits 0 (src/worker.ts: useProcessExit); a crash would exit 1 and leave jobs
    // `processing`.
    expect(exit).toEqual({ code: 0, signal: null });

    const all = await jobs()
      .find({}, { projection: { status: 1, attempts: 1, messageId: 1 } })
      .toArray();
    const claimed = all.filter((job) => job.attempts > 0);
    expect(claimed.length).toBeGreaterThan(0);
    expect(claimed.filter((job) => job.status !== 'completed')).toEqual([]);
    // It stopped claiming: the rest are still due, untouched.
    const unclaimed = all.filter((job) => job.attempts === 0);
    expect(unclaimed.length).toBeGreaterThan(0);
    for (const job of unclaimed) expect(job.status).toBe('pending');
    // Every completed job's message left once; every message that left belongs to a completed job.
    expect(server.received).toHaveLength(claimed.length);
    expect(duplicateMessageIds(server.received)).toEqual([]);
    expect(new Set(receivedIds(server))).toEqual(new Set(claimed.map((job) => `<${job.messageId}>`)));
    expect(server.serverErrors).toEqual([]);
  });
});
