import { Injectable, Module } from '@nestjs/common';
import { getModelToken } from '@nestjs/mongoose';
import { MongoClient, ObjectId } from 'mongodb';
import type { Model } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { ComposerHandler } from '../src/email/jobs/email-handlers';
import { EmailJobStore, LAPSED_DELIVERY_ERROR } from '../src/email/jobs/email-job.store';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { JobHandler } from '../src/queue/job-handler.decorator';
import { JobHandlers } from '../src/queue/job-handlers';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { drainEmailQueue, firstDue } from './helpers/email-queue';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { BELOW_DEFAULT_SHUTDOWN_MS, settles, sleep, waitFor } from './helpers/wait';

/** A composer that never answers: its job is in flight, never handed to the transport, until released. */
@Injectable()
class HangingComposer {
  static calls = 0;

  @ComposerHandler('hangs')
  compose(): Promise<never> {
    HangingComposer.calls += 1;
    return new Promise<never>(() => undefined);
  }
}

@Module({ providers: [HangingComposer] })
class HangingComposerModule {}

/** A handler for a job type the e-mail queue does not declare. */
@Injectable()
class StrayHandler {
  // Untyped (the family form): the kind's typed form refuses an undeclared type at compile time.
  @JobHandler('email.unknown', 'job')
  handle(): Promise<void> {
    return Promise.resolve();
  }
}

@Module({ providers: [StrayHandler] })
class StrayHandlerModule {}

/**
 * The lease-queue engine's rules (src/queue/) through the e-mail kind: claims, handed marks, the lapse rule
 * per case, a bounded stop, and the boot check of job handlers.
 */
describe('Lease-queue engine', () => {
  let smtp: TestSmtpServer;
  let t: TestApp | undefined;
  const jobs = () => t!.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  const jobById = (id: string) => jobs().findById(id).lean<EmailJob>().orFail().exec();

  beforeAll(async () => {
    smtp = await startSmtpServer();
    process.env.SMTP_URL = smtp.url;
  });
  afterEach(async () => {
    delete process.env.WORKER_SHUTDOWN_MS;
    await t?.close();
    t = undefined;
    smtp.received.length = 0;
  });
  afterAll(() => smtp.close());

  async function start(options: Parameters<typeof createTestApp>[0] = {}) {
    t = await createTestApp(options);
    await resetDatabase(t.connection);
    return t;
  }

  it('lets exactly one of several racing claims take a job', async () => {
    const app = await start();
    const store = app.app.get(EmailJobStore);
    for (let i = 0; i < 20; i += 1) {
      await app.app.get(EmailService).enqueueEmail({ to: `r${i}@example.com`, subject: 'Hi', text: 'Hi' });
    }
    const due = await firstDue(app, 20);
    const claims = await Promise.all(
      ['a', 'b', 'c'].map((worker) => store.claimMany(due, (job) => `${worker}.${String(job._id)}`, 60_000)),
    );
    const taken = claims.flat().map(({ job }) => String(job._id));
    expect(taken.sort()).toEqual(due.map((job) => String(job._id)).sort());
    expect(new Set(taken).size).toBe(20);
  });

  it('after a crash: a handed job without an outcome ends dead, one never handed is pending and sent once', async () => {
    const app = await start();
    const email = app.app.get(EmailService);
    const store = app.app.get(EmailJobStore);
    const handed = await email.enqueueEmail({ to: 'handed@example.com', subject: 'Hi', text: 'Hi' });
    const notHanded = await email.enqueueEmail({ to: 'waiting@example.com', subject: 'Hi', text: 'Hi' });
    // The holder claims both, marks one handed, and never finishes: its lease lapses.
    const claimed = await store.claimMany(await firstDue(app, 2), (job) => `holder.${String(job._id)}`, 1);
    expect(claimed).toHaveLength(2);
    expect(await store.markHanded([`holder.${handed.id}`])).toEqual(new Set([`holder.${handed.id}`]));
    await sleep(10);
    expect(await store.reapLapsedLeases()).toMatchObject({ dead: 1, requeued: 1 });
    expect(await jobById(handed.id)).toMatchObject({ status: 'dead', lastError: LAPSED_DELIVERY_ERROR });
    expect(await jobById(notHanded.id)).toMatchObject({ status: 'pending', attempts: 1 });

    await drainEmailQueue(app);
    expect(await jobById(notHanded.id)).toMatchObject({ status: 'completed', attempts: 2 });
    expect(smtp.received.map((mail) => mail.to[0])).toEqual(['waiting@example.com']);
  });

  it('does not hand a job whose lease was reaped meanwhile', async () => {
    const app = await start();
    const { id } = await app.app
      .get(EmailService)
      .enqueueEmail({ to: 'a@example.com', subject: 'Hi', text: 'Hi' });
    const store = app.app.get(EmailJobStore);
    await store.claimMany(await firstDue(app, 1), () => 'slow-holder', 1);
    await sleep(10);
    await store.reapLapsedLeases();
    expect(await store.markHanded(['slow-holder'])).toEqual(new Set());
    expect(await jobById(id)).toMatchObject({ status: 'pending' });
  });

  it('stops at WORKER_SHUTDOWN_MS when a handler never resolves, and releases its job', async () => {
    process.env.WORKER_SHUTDOWN_MS = '1000';
    const app = await start({ imports: [HangingComposerModule] });
    const { id } = await app.app.get(EmailService).enqueueEmail({ to: 'a@example.com', composer: 'hangs' });
    HangingComposer.calls = 0;
    void app.app.get(EmailWorker).processDueJobs();
    await waitFor(() => HangingComposer.calls > 0, { describe: () => 'the composer was never called' });
    expect(HangingComposer.calls).toBe(1);
    // The handler never resolves: the stop ending at all, before the 30 s default, is the limit at work.
    expect(await settles(app.close(), BELOW_DEFAULT_SHUTDOWN_MS)).toBe(true);
    t = undefined;
    const client = await MongoClient.connect(process.env.MONGODB_URI!);
    try {
      const job = await client
        .db()
        .collection('email_jobs')
        .findOne({ _id: new ObjectId(id) });
      expect(job).toMatchObject({ status: 'pending', attempts: 0, claimKey: `${id}.0` });
      expect(job).not.toHaveProperty('lockToken');
    } finally {
      await client.close();
    }
  });

  it('refuses to boot with a handler for a job type no queue declares', async () => {
    await expect(createTestApp({ imports: [StrayHandlerModule] })).rejects.toThrow(
      'Queue "email": @JobHandler for unknown job type(s) email.unknown',
    );
  });

  it('refuses a queue whose declared job type has no handler', async () => {
    const app = await start();
    expect(() => app.app.get(JobHandlers).check('email', ['email.send', 'email.missing'])).toThrow(
      'Queue "email": no @JobHandler for job type(s) email.missing',
    );
  });
});
