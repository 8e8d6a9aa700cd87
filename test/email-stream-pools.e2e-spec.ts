import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { EmailService } from '../src/email/email.service';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { setEnv } from './helpers/env';
import { seedApp } from './helpers/factories';
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { waitFor } from './helpers/wait';

/** Each stream's slots, and the worker's concurrency: one shared pool would have exactly this many. */
const SLOTS = 2;
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: SLOTS,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 100, maxMs: 2_000 },
};
const CAMPAIGN = 'spring-news';
const PEOPLE = 6;

/**
 * The SMTP connection pools of the streams (docs/operations/email-delivery.md, "Streams"): every broadcast
 * connection is held busy by the sink, and a sign-in link still reaches it on the transactional pool. With
 * one pool of the worker's size for both streams the link waited for a broadcast send to be answered.
 */
describe('SMTP pools per stream', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let restoreEnv: () => void;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    restoreEnv = setEnv({
      SMTP_URL: smtp.url,
      EMAIL_WORKER_CONCURRENCY: String(SLOTS),
      // A held send never times out while the test runs: a link queued behind one never arrives.
      SMTP_SEND_TIMEOUT_MS: '600000',
    });
    t = await createTestApp({ overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }] });
    await resetDatabase(t.connection);
  });
  afterAll(async () => {
    await t?.close();
    await smtp.close();
    restoreEnv();
  });

  it('delivers a magic link while every broadcast connection is busy at the SMTP server', async () => {
    const appId = (await seedApp(t, { name: 'Shop', features: { magicLinkUrl: 'https://shop.test/in' } })).id;
    const isCampaign = (mail: Pick<ReceivedMail, 'headers'>) => mail.headers.subject === 'Spring news';
    // The server holds every campaign message it is given (no answer until the test releases them).
    smtp.delayFor = (mail) => (isCampaign(mail) ? 10 * 60_000 : 0);
    await t.app.get(EmailService).enqueueEmails(
      Array.from({ length: PEOPLE }, (_, i) => ({
        message: {
          to: `reader${i}@example.com`,
          appId,
          campaignId: CAMPAIGN,
          subject: 'Spring news',
          text: 'Hi',
        },
        options: { idempotencyKey: `${CAMPAIGN}:${i}` },
      })),
    );
    const worker = t.app.get(EmailWorker);
    const campaignRun = worker.processDueJobs();
    const heldAtServer = () => smtp.attempts.filter((attempt) => attempt.to[0].startsWith('reader')).length;
    await waitFor(() => heldAtServer() === SLOTS, {
      describe: () => `${heldAtServer()} campaign sends held`,
    });

    const res = await t.http.post('/auth/magic-link', { email: 'signin@example.com', appId });
    expect(res.status).toBe(200);
    await t.app.get(MagicLinkService).idle();
    const linkRun = worker.processDueJobs();
    const link = () => smtp.received.find((mail) => mail.to.includes('signin@example.com'));
    await waitFor(() => link() !== undefined, {
      describe: () => `no link; ${heldAtServer()} campaign sends held at the server`,
    });

    // Every broadcast connection was still busy: no campaign message answered, none given up and retried
    // (a shared pool frees a connection only when nodemailer's socket timeout ends a held send).
    expect(smtp.received.filter(isCampaign)).toHaveLength(0);
    expect(heldAtServer()).toBe(SLOTS);
    const jobs = t.connection.collection('email_jobs');
    expect(await jobs.countDocuments({ campaignId: CAMPAIGN, lastError: { $exists: true } })).toBe(0);
    expect(link()!.headers.subject).not.toBe('Spring news');

    smtp.delayFor = () => 0;
    smtp.answerWaiting();
    await Promise.all([campaignRun, linkRun]);
    await worker.processDueJobs();
    expect(smtp.received.filter(isCampaign)).toHaveLength(PEOPLE);
  });
});
