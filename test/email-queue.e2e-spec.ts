import { Injectable, Module } from '@nestjs/common';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { RenderedContent } from '../src/email/delivery/template-source';
import { ComposerHandler } from '../src/email/jobs/email-handlers';
import type { EmailMessage } from '../src/email/jobs/email-message';
import { EmailService } from '../src/email/email.service';
import { EmailJobStore, LAPSED_DELIVERY_ERROR } from '../src/email/jobs/email-job.store';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { drainEmailQueue, firstDue } from './helpers/email-queue';
import { createTestApp, TestApp } from './helpers/app';
import { useMailApp } from './helpers/mail-app';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { TestSmtpServer } from './helpers/smtp';

/** Short retry delays so the retry path runs in a test; everything else as in production. */
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 4,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 100, maxMs: 2_000 },
};

type Compose = (message: EmailMessage) => Promise<RenderedContent | null>;
const unset: Compose = () => Promise.reject(new Error('composer not set by the test'));

/** Message composers for these tests, marked as a module's would be; each test sets what they do. */
@Injectable()
class TestComposers {
  static greeting: Compose = unset;
  static bringsUrgent: Compose = unset;

  @ComposerHandler('greeting')
  greeting(message: EmailMessage) {
    return TestComposers.greeting(message);
  }

  @ComposerHandler('never')
  never() {
    return Promise.resolve(null);
  }

  @ComposerHandler('brings-urgent')
  bringsUrgent(message: EmailMessage) {
    return TestComposers.bringsUrgent(message);
  }
}

@Module({ providers: [TestComposers] })
class TestComposersModule {}

const APP_OPTIONS = {
  imports: [TestComposersModule],
  overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }],
};

describe('E-mail queue, worker and delivery', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let email: EmailService;
  let worker: EmailWorker;
  let jobs: Model<EmailJob>;
  let admin: Session;
  let viewer: Session;

  const mailApp = useMailApp({
    env: { MAIL_FROM: 'Admin Service <no-reply@mail.example.com>' },
    ...APP_OPTIONS,
  });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    email = t.app.get(EmailService);
    worker = t.app.get(EmailWorker);
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  });
  beforeEach(async () => {
    ({ admin, viewer } = await createSessions(t));
    smtp.verdict = () => ({ accept: true });
  });

  const jobById = (id: string) => jobs.findById(id).lean<EmailJob>().orFail().exec();
  const literal = {
    to: 'ada@example.com',
    subject: 'Hello & welcome',
    html: '<p>Hi Ada</p>',
    text: 'Hi Ada',
  };

  const drain = (deadlineMs?: number) => drainEmailQueue(t, { deadlineMs });

  describe('delivery over SMTP', () => {
    it('sends a literal message and records the Message-ID as the provider message id', async () => {
      const { id, created } = await email.enqueueEmail(literal);
      expect(created).toBe(true);
      await drain();

      expect(smtp.received).toHaveLength(1);
      const [mail] = smtp.received;
      expect(mail.to).toEqual(['ada@example.com']);
      expect(mail.from).toBe('no-reply@mail.example.com');
      expect(mail.headers.subject).toBe('Hello & welcome');
      expect(mail.headers['message-id']).toBe(`<${id}@mail.example.com>`);
      expect(mail.raw).toContain('<p>Hi Ada</p>');
      expect(mail.headers['list-unsubscribe']).toBeUndefined();

      const job = await jobById(id);
      expect(job).toMatchObject({ status: 'completed', attempts: 1, messageId: `${id}@mail.example.com` });
      expect(job.result).toMatchObject({ messageId: `${id}@mail.example.com`, provider: 'smtp' });
      expect(job.completedAt).toBeInstanceOf(Date);
    });

    it('adds List-Unsubscribe with RFC 8058 one-click to bulk mail', async () => {
      await email.enqueueEmail({ ...literal, unsubscribeUrl: 'https://news.example.com/u/tok123' });
      await drain();
      expect(smtp.received[0].headers['list-unsubscribe']).toBe('<https://news.example.com/u/tok123>');
      expect(smtp.received[0].headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    });

    it('renders a stored template at send time, with the language fallback and the template sender', async () => {
      const app = await seedApp(t);
      const created = await admin.http.post('/admin/templates', {
        appId: app.id,
        name: 'welcome',
        language: 'en',
        subject: 'Welcome, {{name}} & co',
        htmlTemplate: '<p>Hello {{name}}</p>',
        textTemplate: 'Hello {{name}}',
        variables: ['name'],
        sender: { name: 'Team', email: 'team@mail.example.com' },
      });
      expect(created.status).toBe(200);

      const { id } = await email.enqueueEmail({
        to: 'bob@example.com',
        appId: app.id,
        template: { name: 'welcome', language: 'fr' },
        variables: { name: 'Bob <b>' },
      });
      await drain();

      expect((await jobById(id)).status).toBe('completed');
      const [mail] = smtp.received;
      expect(mail.from).toBe('team@mail.example.com');
      expect(mail.headers.from).toBe('Team <team@mail.example.com>');
      expect(mail.headers.subject).toBe('Welcome, Bob <b> & co');
      expect(mail.raw).toContain('Hello Bob &lt;b&gt;');
      expect(mail.raw).toContain('Hello Bob <b>');
    });

    it('gives up at once on an unknown template, without sending', async () => {
      const { id } = await email.enqueueEmail({ to: 'bob@example.com', template: { name: 'nope' } });
      await drain();
      const job = await jobById(id);
      expect(job).toMatchObject({ status: 'dead', attempts: 1 });
      expect(job.lastError).toContain('No active template "nope"');
      expect(smtp.attempts).toHaveLength(0);
    });

    it('composes a message at send time with the composer its payload names', async () => {
      const composed: string[] = [];
      TestComposers.greeting = (message) => {
        composed.push(message.to);
        const name = String(message.variables?.name);
        return Promise.resolve({ subject: `Hi ${name}`, html: `<p>Hi ${name}</p>`, text: `Hi ${name}` });
      };
      const { id } = await email.enqueueEmail({
        to: 'bob@example.com',
        composer: 'greeting',
        variables: { name: 'Bob' },
      });
      // Nothing is rendered into the queue: the worker composes when it sends.
      expect((await jobById(id)).payload).not.toHaveProperty('html');
      expect(composed).toEqual([]);
      await drain();

      expect((await jobById(id)).status).toBe('completed');
      expect(composed).toEqual(['bob@example.com']);
      const [mail] = smtp.received;
      expect(mail.headers.subject).toBe('Hi Bob');
      expect(mail.raw).toContain('<p>Hi Bob</p>');
    });

    it('gives up at once on an unknown composer, or one that cannot compose the message', async () => {
      const unknown = await email.enqueueEmail({ to: 'bob@example.com', composer: 'nope' });
      const refused = await email.enqueueEmail({ to: 'bob@example.com', composer: 'never' });
      await drain();
      expect(await jobById(unknown.id)).toMatchObject({
        status: 'dead',
        attempts: 1,
        lastError: 'No message composer "nope"',
      });
      expect(await jobById(refused.id)).toMatchObject({
        status: 'dead',
        attempts: 1,
        lastError: 'The "never" composer cannot compose this message',
      });
      expect(smtp.attempts).toHaveLength(0);
    });
  });

  describe('failures', () => {
    it('retries a temporary rejection with growing delays, then marks the job dead', async () => {
      smtp.verdict = () => ({ accept: false, code: 451, message: 'Try again later' });
      const { id } = await email.enqueueEmail(literal, { maxAttempts: 4 });
      await drain();

      const job = await jobById(id);
      expect(job).toMatchObject({ status: 'dead', attempts: 4 });
      expect(job.lastError).toContain('Try again later');
      expect(smtp.attempts).toHaveLength(4);
      const gaps = smtp.attempts.slice(1).map((attempt, i) => attempt.at - smtp.attempts[i].at);
      // Backoff windows 50–100, 100–200, 200–400 ms: the last wait is longer than the first.
      expect(gaps[0]).toBeGreaterThanOrEqual(50);
      expect(gaps[2]).toBeGreaterThan(gaps[0]);
      expect(smtp.received).toHaveLength(0);
    });

    it('records a failed attempt with its error and a later due time', async () => {
      smtp.verdict = () => ({ accept: false, code: 421, message: 'Busy' });
      const { id } = await email.enqueueEmail(literal);
      await worker.processDueJobs();
      const job = await jobById(id);
      // One run works until nothing is due: on a slow machine the retry (50–100 ms later) may fall within
      // it. Every attempt is recorded, and the job waits for a later one.
      expect(job.status).toBe('failed');
      expect(smtp.attempts.length).toBeGreaterThanOrEqual(1);
      expect(job.attempts).toBe(smtp.attempts.length);
      expect(job.lastError).toContain('Busy');
      expect(job.scheduledAt.getTime()).toBeGreaterThanOrEqual(smtp.attempts.at(-1)!.at + 50);
    });

    it('does not retry a permanent (5xx) rejection', async () => {
      smtp.verdict = () => ({ accept: false, code: 550, message: 'Mailbox unavailable' });
      const { id } = await email.enqueueEmail(literal);
      await drain();
      expect(await jobById(id)).toMatchObject({ status: 'dead', attempts: 1 });
      expect(smtp.attempts).toHaveLength(1);
    });

    it('marks a job whose worker stopped mid-delivery dead instead of sending it twice', async () => {
      const { id } = await email.enqueueEmail(literal);
      const store = t.app.get(EmailJobStore);
      const [due] = await firstDue(t, 1);
      // A worker that claimed the job with a 1 ms lease, handed its message to the transport and died.
      expect(await store.claimMany([due], () => 'dead-worker-token', 1)).toHaveLength(1);
      await store.markHanded(['dead-worker-token']);
      await new Promise((resolve) => setTimeout(resolve, 10));
      await drain();
      expect(await jobById(id)).toMatchObject({ status: 'dead', lastError: LAPSED_DELIVERY_ERROR });
      expect(smtp.attempts).toHaveLength(0);
    });
  });

  describe('claims', () => {
    it('lets one claim take a job; a stale scan cannot take it again after a retry', async () => {
      // A retry wait longer than any run: on a busy machine a 100 ms one falls due while the run still
      // scans, and the run makes a second attempt (docs/development.md, "Retries within one run").
      const { backoff } = WORKER_OPTIONS;
      WORKER_OPTIONS.backoff = { baseMs: 600_000, maxMs: 600_000 };
      try {
        smtp.verdict = () => ({ accept: false, code: 451, message: 'Later' });
        await email.enqueueEmail(literal);
        const store = t.app.get(EmailJobStore);
        const [scanned] = await firstDue(t, 1);
        await worker.processDueJobs();
        // The job failed once and is due again later under a new key: the old key claims nothing.
        expect(await store.claimMany([scanned], () => 'late-worker-token', 60_000)).toEqual([]);
        const job = await jobs.findById(scanned._id).select('+claimKey').lean<EmailJob>().orFail().exec();
        expect(job).toMatchObject({ status: 'failed', attempts: 1, claimKey: `${String(scanned._id)}.1` });
      } finally {
        WORKER_OPTIONS.backoff = backoff;
      }
    });

    it('scans again once a scan is `rescanAfterMs` old: a job that fell due meanwhile goes next', async () => {
      // One message at a time, and every scan stale after its first claim.
      const options = t.app.get<EmailWorkerOptions>(EMAIL_WORKER_OPTIONS);
      const saved = { ...options };
      Object.assign(options, { concurrency: 1, rescanAfterMs: 0 });
      try {
        let urgent: Promise<unknown> | undefined;
        TestComposers.bringsUrgent = () => {
          // While the scan's first message is being sent, a transactional message falls due.
          urgent ??= email.enqueueEmail(
            { to: 'urgent@example.com', subject: 'Urgent', text: 'Now' },
            { priority: 10 },
          );
          return urgent.then(() => ({ subject: 'News', html: '', text: 'News' }));
        };
        for (let i = 0; i < 4; i++) {
          await email.enqueueEmail({ to: `reader${i}@example.com`, composer: 'brings-urgent' });
        }
        await drain();
        const order = smtp.received.map((mail) => mail.to[0]);
        expect(order).toHaveLength(5);
        expect(order[1]).toBe('urgent@example.com');
      } finally {
        Object.assign(options, saved);
      }
    });

    it('works through a scan batch by batch and ends when nothing more is due', async () => {
      const store = t.app.get(EmailJobStore);
      for (let i = 0; i < 5; i++) await email.enqueueEmail({ ...literal, to: `reader${i}@example.com` });
      const scan = store.scanDue(2);
      try {
        const batches = [await scan.next(), await scan.next(), await scan.next(), await scan.next()];
        expect(batches.map((batch) => batch.length)).toEqual([2, 2, 1, 0]);
        expect(new Set(batches.flat().map((job) => job.to)).size).toBe(5);
      } finally {
        await scan.close();
      }
    });

    it('puts a batch plan whose worker died back in the queue', async () => {
      const plan = await email.enqueueBatchPlan({
        kind: 'recipients',
        message: { subject: 'Hi', text: 'Hi' },
        recipients: [{ to: 'a@example.com' }],
      });
      const store = t.app.get(EmailJobStore);
      const [due] = await firstDue(t, 1);
      expect(await store.claimMany([due], () => 'dead-planner-token', 1)).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 10));
      await drain();
      expect(await jobById(plan.id)).toMatchObject({ status: 'completed', attempts: 2 });
      expect(smtp.received).toHaveLength(1);
    });
  });

  describe('idempotency', () => {
    it('gives the same job for the same key', async () => {
      const first = await email.enqueueEmail(literal, { idempotencyKey: 'welcome:ada' });
      const again = await email.enqueueEmail(
        { ...literal, subject: 'Other' },
        { idempotencyKey: 'welcome:ada' },
      );
      expect(again).toEqual({ id: first.id, idempotencyKey: 'welcome:ada', created: false });
      expect(await jobs.countDocuments().exec()).toBe(1);
    });

    it('keeps input order and deduplicates within and across batches', async () => {
      await email.enqueueEmail(literal, { idempotencyKey: 'k2' });
      const result = await email.enqueueEmails([
        { message: literal, options: { idempotencyKey: 'k1' } },
        { message: literal, options: { idempotencyKey: 'k2' } },
        { message: literal, options: { idempotencyKey: 'k1' } },
      ]);
      expect(result.map((job) => [job.idempotencyKey, job.created])).toEqual([
        ['k1', true],
        ['k2', false],
        ['k1', true],
      ]);
      expect(result[0].id).toBe(result[2].id);
      expect(await jobs.countDocuments().exec()).toBe(2);
    });

    it('refuses a message it could never send, naming the fields', async () => {
      await expect(email.enqueueEmail({ to: 'not-an-address', subject: '' })).rejects.toThrow(
        /to must be an e-mail address.*subject is required/,
      );
      await expect(email.enqueueEmail(literal, { maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
    });
  });

  describe('suppression', () => {
    it('skips a suppressed address (any case) and records the skip on the job', async () => {
      const suppression = t.app.get(SuppressionService);
      await suppression.suppress({ email: 'Ada@Example.com', reason: 'opt_out', source: 'test' });
      const campaignId = '65a000000000000000000001';
      const { id } = await email.enqueueEmail({ ...literal, campaignId, to: 'ADA@example.com' });
      await drain();

      expect(smtp.attempts).toHaveLength(0);
      const job = await jobById(id);
      expect(job.status).toBe('completed');
      expect(job.result).toEqual({ skipped: 'suppressed', reason: 'opt_out', stream: 'broadcast' });

      expect(await suppression.liftOptOut('ada@example.com')).toBe(true);
      await email.enqueueEmail(literal);
      await drain();
      expect(smtp.received).toHaveLength(1);
    });

    it('keeps one entry per address, with the latest reason, and never the address itself', async () => {
      const suppression = t.app.get(SuppressionService);
      await suppression.suppress({ email: 'x@example.com', reason: 'opt_out', source: 'contacts' });
      const entry = await suppression.suppress({
        email: 'X@example.com',
        reason: 'complaint',
        source: 'webhook',
      });
      expect(entry).toMatchObject({ reason: 'complaint', source: 'webhook' });
      expect(entry.addressHash).toMatch(/^[0-9a-f]{64}$/);
      expect(await suppression.isSuppressed('x@EXAMPLE.com')).toBe(true);
      const stored = await t.connection.db!.collection('email_suppressions').find().toArray();
      expect(stored).toHaveLength(1);
      expect(JSON.stringify(stored)).not.toMatch(/example\.com/i);
    });

    it('lifts an opt-out on renewed consent, never a bounce or a complaint', async () => {
      const suppression = t.app.get(SuppressionService);
      await suppression.suppress({ email: 'b@example.com', reason: 'hard_bounce', source: 'webhook' });
      await suppression.suppress({ email: 'c@example.com', reason: 'complaint', source: 'webhook' });
      expect(await suppression.liftOptOut('b@example.com')).toBe(false);
      expect(await suppression.liftOptOut('c@example.com')).toBe(false);
      expect(await suppression.isSuppressed('b@example.com')).toBe(true);
      expect(await suppression.isSuppressed('c@example.com')).toBe(true);
    });
  });

  describe('batch plans', () => {
    it('expands an inline recipient list once, however often the plan runs', async () => {
      const plan = await email.enqueueBatchPlan({
        kind: 'recipients',
        campaignId: 'camp-1',
        message: { subject: 'News for {{name}}', html: '<p>News</p>', campaignId: 'camp-1' },
        recipients: [{ to: 'a@example.com' }, { to: 'b@example.com' }, { to: 'A@example.com' }],
      });
      await drain();

      const planJob = await jobById(plan.id);
      expect(planJob.status).toBe('completed');
      expect(planJob.result).toEqual({ enqueued: 2, alreadyQueued: 0 });
      expect(smtp.received.map((mail) => mail.to[0]).sort()).toEqual(['a@example.com', 'b@example.com']);
      expect(await jobs.countDocuments({ campaignId: 'camp-1', type: 'email.send' }).exec()).toBe(2);

      // The plan runs again (as after a crash while planning): nothing new is queued.
      await jobs
        .updateOne(
          { _id: plan.id },
          { $set: { status: 'pending', scheduledAt: new Date(), claimKey: `${plan.id}.1` } },
        )
        .exec();
      await drain();
      expect((await jobById(plan.id)).result).toEqual({ enqueued: 0, alreadyQueued: 2 });
      expect(smtp.received).toHaveLength(2);
    });

    it('refuses an invalid inline plan when it is enqueued', async () => {
      await expect(
        email.enqueueBatchPlan({
          kind: 'recipients',
          message: { subject: 's', text: 't' },
          recipients: [{ to: 'x' }],
        }),
      ).rejects.toThrow('recipients[0].to must be an e-mail address');
    });

    it('marks a plan of an unknown kind dead', async () => {
      const plan = await email.enqueueBatchPlan({ kind: 'unknown-kind' });
      await drain();
      expect(await jobById(plan.id)).toMatchObject({
        status: 'dead',
        lastError: 'No batch planner for kind "unknown-kind"',
      });
    });
  });

  describe('GET /admin/email-jobs', () => {
    async function seedJobs() {
      const sent = await email.enqueueEmail({ ...literal, campaignId: 'c-1' });
      await drain();
      const queued = await email.enqueueEmails([
        { message: { ...literal, campaignId: 'c-1' } },
        { message: { ...literal, campaignId: 'c-2' } },
      ]);
      const plan = await email.enqueueBatchPlan(
        { kind: 'unknown' },
        { scheduledAt: new Date(Date.now() + 60_000) },
      );
      return { sent, queued, plan };
    }

    it('lists newest first with filters and pagination', async () => {
      const { sent, plan } = await seedJobs();
      const all = await viewer.http.get('/admin/email-jobs');
      expect(all.status).toBe(200);
      expect(all.body.pagination).toMatchObject({
        page: 1,
        limit: 20,
        total: 4,
        pages: 1,
        totalCapped: false,
      });
      expect(all.body.data[0]._id).toBe(plan.id);

      const completed = await viewer.http.get('/admin/email-jobs', { query: { status: 'completed' } });
      expect(completed.body.data.map((job: { _id: string }) => job._id)).toEqual([sent.id]);
      expect(completed.body.data[0]).toMatchObject({ type: 'email.send', campaignId: 'c-1', attempts: 1 });
      expect(completed.body.data[0]).not.toHaveProperty('lockToken');

      const plans = await viewer.http.get('/admin/email-jobs', { query: { type: 'email.batch.plan' } });
      expect(plans.body.pagination.total).toBe(1);
      const campaign = await viewer.http.get('/admin/email-jobs', {
        query: { campaignId: 'c-1', limit: 1, page: 2 },
      });
      expect(campaign.body.pagination).toMatchObject({
        page: 2,
        limit: 1,
        total: 2,
        pages: 2,
        totalCapped: false,
      });
    });

    it('rejects unknown filter values', async () => {
      const invalid: Record<string, string | number>[] = [
        { status: 'done' },
        { type: 'sms' },
        { limit: 101 },
        { campaignId: '{"$ne":1}' },
      ];
      for (const query of invalid) {
        const res = await viewer.http.get('/admin/email-jobs', { query });
        expect(res.status).toBe(400);
        expect(res.body.success).toBe(false);
      }
    });

    it('counts by status with progress, overall and per campaign', async () => {
      await seedJobs();
      const all = await viewer.http.get('/admin/email-jobs/stats');
      expect(all.body.data).toEqual({
        pending: 3,
        processing: 0,
        completed: 1,
        failed: 0,
        dead: 0,
        total: 4,
        capped: false,
        progress: { pending: 3, processing: 0, completed: 1, failed: 0, dead: 0, total: 4, percentage: 25 },
      });
      const campaign = await viewer.http.get('/admin/email-jobs/stats', { query: { campaignId: 'c-1' } });
      expect(campaign.body.data).toMatchObject({
        total: 2,
        completed: 1,
        pending: 1,
        progress: { percentage: 50 },
      });
      const none = await viewer.http.get('/admin/email-jobs/stats', { query: { campaignId: 'nothing' } });
      expect(none.body.data.progress).toMatchObject({ total: 0, percentage: 0 });
    });

    it('gets one job, 404 for unknown and malformed ids', async () => {
      const { sent } = await seedJobs();
      const one = await viewer.http.get(`/admin/email-jobs/${sent.id}`);
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({
        _id: sent.id,
        status: 'completed',
        payload: { to: 'ada@example.com' },
      });
      expect((await viewer.http.get('/admin/email-jobs/64b000000000000000000000')).status).toBe(404);
      expect((await viewer.http.get('/admin/email-jobs/not-an-id')).status).toBe(404);
    });
  });

  describe('shutdown', () => {
    it('waits for the messages in flight and records them', async () => {
      smtp.delayMs = 300;
      const queued = await email.enqueueEmails([{ message: literal }, { message: literal }]);
      const run = worker.processDueJobs();
      // Both messages are in flight (the server holds its answer for 300 ms) before the stop begins.
      for (let i = 0; smtp.attempts.length < 2 && i < 2_000; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const closing = t.app.close();
      await Promise.all([run, closing]);
      smtp.delayMs = 0;
      expect(smtp.received).toHaveLength(2);
      // The app is closed: read the jobs through a fresh connection to the same database.
      const { MongoClient } = await import('mongodb');
      const client = await MongoClient.connect(process.env.MONGODB_URI!);
      try {
        const states = await client
          .db()
          .collection('email_jobs')
          .find({}, { projection: { status: 1 } })
          .toArray();
        expect(states.map((job) => String(job._id)).sort()).toEqual(queued.map((job) => job.id).sort());
        expect(states.map((job) => job.status)).toEqual(['completed', 'completed']);
      } finally {
        await client.close();
      }
      // The fixture resets and closes the app it holds: give it the new one.
      t = mailApp.t = await createTestApp(APP_OPTIONS);
    });
  });
});
