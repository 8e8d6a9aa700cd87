import type { Collection, Document } from 'mongodb';
import { ObjectId } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { validateEnv } from '../src/config/env';
import { EmailService } from '../src/email/email.service';
import { LAPSED_REPEATABLE_ERROR } from '../src/email/jobs/email-job.store';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { SentMessageLookup } from '../src/email/jobs/sent-message-lookup';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { startResendReceiver, type ResendReceiver } from './helpers/resend-receiver';
import { createSession } from './helpers/session';
import {
  COMPILE_HOOK_MS,
  compileWorker,
  killAll,
  startWorker,
  waitFor,
  type CompiledWorker,
  type WorkerProcess,
} from './helpers/worker-process';

const API_KEY = 're_test_0123456789abcdefSECRET';
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const CONCURRENCY = 4;
/** The circuit's probes: the first 100 ms after it opens, doubling up to 400 ms. */
const CIRCUIT = { firstProbeMs: 100, maxProbeMs: 400 };

/**
 * How many probes the circuit lets through within `ms` of opening: the k-th goes no sooner than the sum of
 * the first k waits (each wait starts when the previous probe has failed).
 */
function probesWithin(ms: number): number {
  let probes = 0;
  for (let wait = CIRCUIT.firstProbeMs, at = wait; at <= ms; probes += 1) {
    wait = Math.min(CIRCUIT.maxProbeMs, wait * 2);
    at += wait;
  }
  return probes;
}

/**
 * Sending through Resend's HTTP API (docs/operations/email-transports.md) against a local receiver that
 * honours idempotency keys as Resend does: the fields and headers that arrive, the provider's id recorded,
 * outages (429, 5xx) on the engine's circuit, a validation error as the message's fate, and a worker
 * killed mid-request whose job is sent again with the same key instead of ending `dead`.
 */
describe('E-mail through the Resend API transport', () => {
  let receiver: ResendReceiver;
  let t: TestApp;
  let compiled: CompiledWorker | undefined;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    receiver = await startResendReceiver(API_KEY);
    process.env.EMAIL_TRANSPORT = 'resend-api';
    process.env.RESEND_API_KEY = API_KEY;
    process.env.RESEND_API_URL = receiver.url;
    process.env.WEBHOOK_SECRET = WEBHOOK_SECRET;
    // As many slots per stream as the worker's default: one stream alone can fill a pool of that size.
    process.env.EMAIL_WORKER_CONCURRENCY = String(CONCURRENCY);
    t = await createTestApp({
      overrides: [
        {
          provide: EMAIL_WORKER_OPTIONS,
          useValue: {
            concurrency: CONCURRENCY,
            ratePerSecond: 0,
            leaseMs: 60_000,
            scanSize: 100,
            rescanAfterMs: 2_000,
            finishBatchSize: 10,
            backoff: { baseMs: 100, maxMs: 200 },
            circuit: CIRCUIT,
          } satisfies EmailWorkerOptions,
        },
      ],
    });
    // Starting the app may take longer than Jest's 30 s on a loaded machine; the limit is a safety net.
  }, 120_000);

  afterEach(async () => {
    await killAll(workers);
    receiver.calls.length = 0;
    receiver.messages.length = 0;
    receiver.answer = () => ({ accept: true });
    await resetDatabase(t.connection);
  });

  afterAll(async () => {
    await killAll(workers);
    await t?.close();
    await receiver?.close();
    delete process.env.EMAIL_TRANSPORT;
    delete process.env.RESEND_API_KEY;
    delete process.env.RESEND_API_URL;
    delete process.env.WEBHOOK_SECRET;
    delete process.env.EMAIL_WORKER_CONCURRENCY;
  });

  const jobs = (): Collection<Document> => t.connection.collection('email_jobs');
  const jobOf = (id: string) => jobs().findOne({ _id: new ObjectId(id) });

  it('sends the message with its fields, headers and key, and records Resend’s id on the job and ledger', async () => {
    const { id } = await t.app.get(EmailService).enqueueEmail({
      to: 'ada@example.com',
      from: 'News <news@example.com>',
      replyTo: 'help@example.com',
      subject: 'Hello Ada',
      html: '<p>Hi</p>',
      text: 'Hi',
      unsubscribeUrl: 'https://example.com/u/abc',
    });
    await drainEmailQueue(t);

    expect(receiver.messages).toHaveLength(1);
    const [call] = receiver.calls;
    expect(call.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(call.headers['idempotency-key']).toBe(`email-job/${id}`);
    expect(call.body).toEqual({
      from: 'News <news@example.com>',
      to: ['ada@example.com'],
      subject: 'Hello Ada',
      html: '<p>Hi</p>',
      text: 'Hi',
      reply_to: 'help@example.com',
      headers: {
        'List-Unsubscribe': '<https://example.com/u/abc>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    });

    const providerId = receiver.messages[0].id;
    const job = await jobOf(id);
    expect(job).toMatchObject({
      status: 'completed',
      attempts: 1,
      result: { provider: 'resend-api', providerMessageId: providerId },
    });
    const entry = await t.connection.collection('email_messages').findOne({ _id: new ObjectId(id) });
    expect(entry).toMatchObject({ provider: 'resend-api', providerMessageId: providerId });
    // A provider event naming the message by Resend's id finds it, as one naming our Message-ID does.
    const lookup = t.app.get(SentMessageLookup);
    expect(await lookup.find(providerId)).toMatchObject({ jobId: id, to: 'ada@example.com' });
    expect(await lookup.find(job!.messageId as string)).toMatchObject({ jobId: id });
    expect(await lookup.find('4ac2a6b8-0000-4000-8000-000000000000')).toBeNull();

    // The job view shows the provider's id, never the API key.
    const admin = await createSession(t);
    const view = await admin.http.get(`/admin/email-jobs/${id}`);
    expect(view.status).toBe(200);
    expect(JSON.stringify(view.body)).toContain(providerId);
    expect(JSON.stringify(view.body)).not.toContain(API_KEY);
  });

  it('a Resend webhook naming the message by Resend’s id finds it: a bounce suppresses the address', async () => {
    await t.app.get(EmailService).enqueueEmail({ to: 'bouncy@example.com', subject: 'Hi', text: 'Hi' });
    await drainEmailQueue(t);
    const body = JSON.stringify({
      type: 'email.bounced',
      created_at: new Date().toISOString(),
      data: {
        email_id: receiver.messages[0].id,
        to: ['bouncy@example.com'],
        bounce: { type: 'Permanent', message: '550 no such user' },
      },
    });
    const id = `msg_${randomBytes(8).toString('hex')}`;
    const sentAt = new Date();
    const res = await t.http.request('POST', '/email-events/primary-provider', {
      payload: body,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': new Webhook(WEBHOOK_SECRET).sign(id, sentAt, body),
      },
    });
    expect(res.body).toMatchObject({ success: true, processed: true });
    expect(await t.app.get(SuppressionService).find('bouncy@example.com')).toMatchObject({
      reason: 'hard_bounce',
    });
  });

  it('treats 429 and 5xx as an outage: no attempt counted, the circuit probes, every job sent once', async () => {
    const service = t.app.get(EmailService);
    const people = Array.from({ length: 12 }, (_, i) => `person${i}@example.com`);
    for (const to of people)
      await service.enqueueEmail({ to, subject: 'Hi', text: 'Hi' }, { maxAttempts: 2 });
    // The API takes nothing, rate limited then failing, until the test ends the outage: once it has refused
    // the requests under way when the outage began and three probes. Each refused job would have used up an
    // attempt if refusals counted.
    let outage = true;
    const refusedAt: number[] = [];
    receiver.answer = (_call, index) => {
      if (!outage) return { accept: true };
      refusedAt.push(Date.now());
      return index % 2 === 0
        ? { status: 429, name: 'rate_limit_exceeded' }
        : { status: 503, name: 'application_error' };
    };
    const worker = t.app.get(EmailWorker);
    const warn = jest.spyOn(worker['logger'], 'warn');
    let postponed = 0;
    await waitFor(
      async () => {
        postponed += (await worker.processDueJobs()).postponed;
        return refusedAt.length >= CONCURRENCY + 3;
      },
      { intervalMs: 20, describe: () => `${refusedAt.length} refused call(s)` },
    );
    outage = false;
    await drainEmailQueue(t);

    const all = await jobs().find({}).toArray();
    expect(all.map((job) => [job.status, job.attempts])).toEqual(people.map(() => ['completed', 1]));
    expect(receiver.messages.map((message) => message.body.to[0]).sort()).toEqual([...people].sort());
    expect(postponed).toBeGreaterThan(0);
    // The requests under way when the circuit opened (one per slot), then one probe per wait, however slow
    // the machine: a slower one makes fewer probes in the same time, never more.
    const outageMs = refusedAt[refusedAt.length - 1] - refusedAt[0];
    expect(refusedAt.length).toBeLessThanOrEqual(CONCURRENCY + probesWithin(outageMs));
    expect(warn.mock.calls.map(([line]) => String(line))).toContainEqual(
      expect.stringMatching(/^Resend API unavailable: Resend API (429|503)/),
    );
    warn.mockRestore();
  });

  it('keeps a connection for a sign-in link while every broadcast slot waits for an answer', async () => {
    const service = t.app.get(EmailService);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.answer = (call) =>
      call.body.to[0].startsWith('reader') ? { accept: true, after: held } : { accept: true };
    const readers = Array.from({ length: CONCURRENCY }, (_, i) => `reader${i}@example.com`);
    for (const to of readers)
      await service.enqueueEmail({ to, subject: 'News', text: 'News' }, { stream: 'broadcast' });
    const worker = t.app.get(EmailWorker);
    const broadcasts = worker.processDueJobs();
    await waitFor(() => receiver.calls.length === CONCURRENCY, {
      describe: () => `${receiver.calls.length} call(s)`,
    });

    // Every broadcast slot holds a request the API has not answered; the link still gets a socket.
    await service.enqueueEmail({ to: 'signin@example.com', subject: 'Your link', text: 'Link' });
    const link = worker.processDueJobs();
    const linkSent = () => receiver.messages.some((message) => message.body.to[0] === 'signin@example.com');
    // A link that got its socket only when a held request gave up (RESEND_API_TIMEOUT_MS) came too late.
    const abandoned = () => receiver.calls.filter((call) => call.abandoned).length;
    await waitFor(() => linkSent() || abandoned() > 0, {
      describe: () => `calls to ${receiver.calls.map((call) => call.body.to[0]).join(', ')}`,
    });
    expect({ linkSent: linkSent(), abandoned: abandoned() }).toEqual({ linkSent: true, abandoned: 0 });
    release();
    await Promise.all([broadcasts, link]);
    const all = await jobs().find({}).toArray();
    expect(all.map((job) => job.status)).toEqual(all.map(() => 'completed'));
  });

  it('ends a job the API refuses as invalid (422) dead at once, with the reason', async () => {
    receiver.answer = () => ({
      status: 422,
      name: 'validation_error',
      message: 'Invalid `to` field. The email address needs to follow the `email@example.com` format.',
    });
    const { id } = await t.app
      .get(EmailService)
      .enqueueEmail({ to: 'ada@example.com', subject: 'Hi', text: 'Hi' }, { maxAttempts: 5 });
    await drainEmailQueue(t);
    expect(await jobOf(id)).toMatchObject({
      status: 'dead',
      attempts: 1,
      lastError: expect.stringContaining('Resend API 422 validation_error: Invalid `to` field') as string,
    });
    expect(receiver.calls).toHaveLength(1);
    expect(receiver.messages).toHaveLength(0);
  });

  it('retries a key Resend is still processing (409), and takes a key used with other content as sent', async () => {
    const service = t.app.get(EmailService);
    const busy = await service.enqueueEmail({ to: 'busy@example.com', subject: 'Hi', text: 'Hi' });
    const edited = await service.enqueueEmail({ to: 'edited@example.com', subject: 'Hi', text: 'Hi' });
    receiver.answer = (call, index) =>
      call.body.to[0] === 'busy@example.com' && index === 0
        ? { status: 409, name: 'concurrent_idempotent_requests' }
        : call.body.to[0] === 'edited@example.com'
          ? { status: 409, name: 'invalid_idempotent_request' }
          : { accept: true };
    await drainEmailQueue(t);
    expect(await jobOf(busy.id)).toMatchObject({ status: 'completed', attempts: 2 });
    const sentBefore = await jobOf(edited.id);
    expect(sentBefore).toMatchObject({ status: 'completed', attempts: 1 });
    expect(sentBefore!.result).not.toHaveProperty('providerMessageId');
    expect(receiver.messages.map((message) => message.body.to[0])).toEqual(['busy@example.com']);
  });

  it('production refuses an http:// API URL and a transport without its settings', () => {
    const production = {
      NODE_ENV: 'production',
      APP_SECRET: 'a-production-secret-of-at-least-thirty-two-chars',
      MONGODB_URI: 'mongodb://db.internal:27017/admin-service',
      EMAIL_TRANSPORT: 'resend-api',
      RESEND_API_KEY: API_KEY,
      MAIL_FROM: 'News <news@mail.example.com>',
      PUBLIC_BASE_URL: 'https://mail.example.com',
    };
    expect(() => validateEnv({ ...production, RESEND_API_URL: 'http://api.resend.com' })).toThrow(
      /RESEND_API_URL: must be an https:\/\/ URL/,
    );
    expect(validateEnv({ ...production, RESEND_API_URL: 'https://api.resend.com' }).RESEND_API_URL).toBe(
      'https://api.resend.com',
    );
    expect(() => validateEnv({ ...production, RESEND_API_KEY: '' })).toThrow(/RESEND_API_KEY: is required/);
    expect(() => validateEnv({ ...production, EMAIL_TRANSPORT: 'smtp' })).toThrow(/SMTP_URL: is required/);
  });

  describe('a worker process killed mid-request', () => {
    beforeAll(async () => {
      compiled = await compileWorker();
    }, COMPILE_HOOK_MS);

    function worker(name: string): WorkerProcess {
      const started = startWorker(compiled!, name, {
        MONGODB_URI: process.env.MONGODB_URI!,
        SMTP_URL: '',
        APP_SECRET: process.env.APP_SECRET!,
        DATA_DIR: process.env.DATA_DIR!,
        EMAIL_TRANSPORT: 'resend-api',
        RESEND_API_KEY: API_KEY,
        RESEND_API_URL: receiver.url,
        EMAIL_WORKER_INTERVAL_MS: '100',
        EMAIL_WORKER_LEASE_MS: '1000',
        LOG_LEVEL: 'debug',
      });
      workers.push(started);
      return started;
    }

    const describeState = async () =>
      [
        `jobs ${JSON.stringify(
          await jobs()
            .find({}, { projection: { status: 1, attempts: 1, lastError: 1 } })
            .toArray(),
        )}`,
        `receiver calls ${receiver.calls.length}, messages ${receiver.messages.length}`,
        ...workers.map(
          (w) => `worker ${w.name} exit ${JSON.stringify(w.exit())}:\n${w.output().slice(-3_000)}`,
        ),
      ].join('\n');

    it('is sent again with the same key after the restart: completed, and one message at the receiver', async () => {
      const { id } = await t.app
        .get(EmailService)
        .enqueueEmail({ to: 'ada@example.com', subject: 'Once', text: 'Only once' });
      // The first request is taken, and worker A killed the moment it arrives: the answer, 0.8 s later,
      // finds it gone however slow the machine.
      const a = worker('A');
      receiver.answer = () => {
        void a.kill();
        return { accept: true, delayMs: 800 };
      };
      // Starting a worker process may take long on a loaded machine; the limits are safety nets.
      await waitFor(() => receiver.calls.length >= 1 || a.exit() !== null, {
        timeoutMs: 90_000,
        intervalMs: 5,
        describe: describeState,
      });
      await a.kill();
      expect(await jobOf(id)).toMatchObject({ status: 'processing', handedAt: expect.any(Date) as Date });

      receiver.answer = () => ({ accept: true });
      const b = worker('B');
      await waitFor(async () => (await jobOf(id))?.status === 'completed', {
        timeoutMs: 90_000,
        describe: describeState,
      });

      const job = await jobOf(id);
      expect(job).toMatchObject({
        status: 'completed',
        attempts: 2,
        lastError: LAPSED_REPEATABLE_ERROR,
        result: { providerMessageId: receiver.messages[0].id },
      });
      // Two requests with one key; the receiver sent one message and answered the second with its id.
      expect(receiver.messages).toHaveLength(1);
      expect(receiver.calls.map((call) => call.headers['idempotency-key'])).toEqual([
        `email-job/${id}`,
        `email-job/${id}`,
      ]);
      for (const w of [a, b]) expect(w.output()).not.toContain(API_KEY);
    }, 240_000);
  });
});
