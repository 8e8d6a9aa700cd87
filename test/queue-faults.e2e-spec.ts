import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { EmailJobStore } from '../src/email/jobs/email-job.store';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { drainEmailQueue, firstDue } from './helpers/email-queue';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { BELOW_DEFAULT_SHUTDOWN_MS, settles, sleep, waitFor } from './helpers/wait';

/** Short waits, so the engine's timers (reaper, shutdown bound) act within a test. */
const WORKER_OPTIONS = {
  concurrency: 2,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 100, maxMs: 2_000 },
  reapEveryMs: 200,
} as EmailWorkerOptions;

/**
 * The e-mail queue's fault rules (docs/decisions/queue-lease-queue-engine.md), through the
 * queue's service API and the real SMTP client against a loopback server.
 */
describe('E-mail queue under faults', () => {
  let smtp: TestSmtpServer;
  let t: TestApp | undefined;
  const jobs = () => t!.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  const jobById = (id: string) => jobs().findById(id).lean<EmailJob>().orFail().exec();
  const message = (to: string) => ({ to, subject: 'Hello', text: 'Hi' });

  async function start(options: EmailWorkerOptions = WORKER_OPTIONS): Promise<TestApp> {
    t = await createTestApp({ overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: options }] });
    await resetDatabase(t.connection);
    return t;
  }

  beforeAll(async () => {
    smtp = await startSmtpServer();
    process.env.SMTP_URL = smtp.url;
  });
  afterEach(async () => {
    delete process.env.EMAIL_WORKER_ENABLED;
    delete process.env.WORKER_SHUTDOWN_MS;
    process.env.EMAIL_WORKER_ENABLED = 'false';
    smtp.delayMs = 0;
    await t?.close();
    t = undefined;
    smtp.received.length = 0;
    smtp.attempts.length = 0;
  });
  afterAll(() => smtp.close());

  it('sends a job whose holder died before handing it to the transport, once', async () => {
    const app = await start();
    const { id } = await app.app.get(EmailService).enqueueEmail(message('ada@example.com'));
    // A worker claimed the job with a 1 ms lease and died before its message reached the transport.
    const [due] = await firstDue(app, 1);
    await app.app.get(EmailJobStore).claimMany([due], () => 'dead-worker-token', 1);
    await sleep(10);
    await drainEmailQueue(app);
    expect(await jobById(id)).toMatchObject({ status: 'completed' });
    expect(smtp.received.map((mail) => mail.to[0])).toEqual(['ada@example.com']);
  });

  it('reaps a lapsed lease on its own timer while the worker’s run is stuck in a send', async () => {
    process.env.EMAIL_WORKER_ENABLED = 'true';
    process.env.EMAIL_WORKER_INTERVAL_MS = '50';
    const app = await start();
    const email = app.app.get(EmailService);
    // The send hangs until the test answers it (answerWaiting), however long the reaping takes.
    smtp.delayMs = 10 * 60_000;
    await email.enqueueEmail(message('stuck@example.com'));
    // The polling worker takes the job and its send hangs.
    await waitFor(() => smtp.attempts.length > 0, { describe: () => 'the worker sent nothing' });
    expect(smtp.attempts).toHaveLength(1);
    // Another worker's claim lapses meanwhile.
    const { id } = await email.enqueueEmail(message('lapsed@example.com'), { priority: -1 });
    const [due] = await firstDue(app, 1);
    expect(due.to).toBe('lapsed@example.com');
    await app.app.get(EmailJobStore).claimMany([due], () => 'dead-worker-token', 1);
    await waitFor(async () => (await jobById(id)).status !== 'processing', {
      describe: () => 'the lapsed lease was never reaped',
    });
    // Reaped while the worker's run was still stuck in its send.
    expect(smtp.received).toEqual([]);
    smtp.delayMs = 0;
    smtp.answerWaiting();
  });

  it('stops at WORKER_SHUTDOWN_MS, releasing a job waiting for its turn, attempt not counted', async () => {
    process.env.WORKER_SHUTDOWN_MS = '1000';
    // One message a minute: the second job waits in the rate limiter, never handed to the transport.
    const app = await start({
      ...WORKER_OPTIONS,
      concurrency: 1,
      ratePerSecond: 1 / 60,
    });
    const email = app.app.get(EmailService);
    const first = await email.enqueueEmail(message('first@example.com'));
    const second = await email.enqueueEmail(message('second@example.com'));
    const run = app.app.get(EmailWorker).processDueJobs();
    const ours = () =>
      smtp.received.filter((mail) => ['first@example.com', 'second@example.com'].includes(mail.to[0]));
    await waitFor(() => ours().length > 0, { describe: () => 'neither job was sent' });
    expect(ours()).toHaveLength(1);
    // Which of the two goes first is up to the scan's shuffle; the other waits and is released.
    const [sent, waiting] =
      ours()[0].to[0] === 'first@example.com' ? [first.id, second.id] : [second.id, first.id];
    // The sent job's outcome is written before the stop: on a busy machine its write may take longer than
    // the 1 s stop, and an outcome the stop cuts off is the lapse rule's case, not this test's.
    await waitFor(async () => (await jobById(sent)).status === 'completed', {
      describe: () => 'the sent job was never recorded completed',
    });
    // The second job waits a minute for its turn: the stop ending at all, before the 30 s default, is the
    // shutdown limit at work.
    expect(await settles(app.close(), BELOW_DEFAULT_SHUTDOWN_MS)).toBe(true);
    t = undefined;
    await run.catch(() => undefined);

    const { MongoClient } = await import('mongodb');
    const client = await MongoClient.connect(process.env.MONGODB_URI!);
    try {
      const collection = client.db().collection<EmailJob>('email_jobs');
      const byId = async (id: string) => {
        const { ObjectId } = await import('mongodb');
        return collection.findOne({ _id: new ObjectId(id) });
      };
      expect(await byId(sent)).toMatchObject({ status: 'completed', attempts: 1 });
      expect(await byId(waiting)).toMatchObject({ status: 'pending', attempts: 0 });
    } finally {
      await client.close();
    }
    expect(ours()).toHaveLength(1);
  });

  it('retries an outcome write that fails once (an election) instead of dropping it', async () => {
    const app = await start();
    const { id } = await app.app.get(EmailService).enqueueEmail(message('ada@example.com'));
    const store = app.app.get(EmailJobStore);
    const finish = jest.spyOn(store, 'finish').mockRejectedValueOnce(new Error('not primary'));
    await app.app
      .get(EmailWorker)
      .processDueJobs()
      .catch(() => undefined);
    expect(finish.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(await jobById(id)).toMatchObject({ status: 'completed', attempts: 1 });
    expect(smtp.received).toHaveLength(1);
    finish.mockRestore();
  });
});
