import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { EmailService } from '../src/email/email.service';
import { EmailJobsService } from '../src/email/jobs/email-jobs.service';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { waitFor } from './helpers/wait';

/** Two slots per stream, a low provider rate: a campaign of a few hundred keeps the broadcast lane busy. */
const BROADCAST_SLOTS = 2;
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: BROADCAST_SLOTS,
  ratePerSecond: 25,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 100, maxMs: 2_000 },
};
const PEOPLE = 250;

/**
 * Message streams (docs/operations/email-delivery.md, "Streams"): a sign-in link asked for while a campaign
 * is sending goes out on the transactional lane, ahead of the campaign's remaining mail, through a real
 * SMTP server that answers each message after a delay (a throttled provider).
 */
describe('E-mail streams', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    smtp.delayMs = 20;
    process.env.SMTP_URL = smtp.url;
    // A held send never times out while the test runs: one lane for all mail then shows as a link that
    // never arrives (the wait's deadline), not as one sent after the held sends gave up.
    process.env.SMTP_SEND_TIMEOUT_MS = '600000';
    t = await createTestApp({ overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }] });
    await resetDatabase(t.connection);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
    delete process.env.SMTP_URL;
    delete process.env.SMTP_SEND_TIMEOUT_MS;
  });

  it('sends a magic link asked for mid-campaign before the rest of the campaign', async () => {
    const appId = (await seedApp(t, { name: 'Shop', features: { magicLinkUrl: 'https://shop.test/in' } })).id;
    const email = t.app.get(EmailService);
    await email.enqueueEmails(
      Array.from({ length: PEOPLE }, (_, i) => ({
        message: {
          to: `reader${i}@example.com`,
          appId,
          campaignId: 'autumn-news',
          subject: 'Autumn news',
          text: 'Hello',
        },
        options: { idempotencyKey: `autumn-news:${i}` },
      })),
    );
    const worker = t.app.get(EmailWorker);
    const campaignRun = worker.processDueJobs();
    const campaignMail = () => smtp.received.filter((mail) => mail.headers.subject === 'Autumn news').length;
    await waitFor(() => campaignMail() >= 20, { describe: () => `${campaignMail()} campaign mails sent` });

    // From now on the provider holds every campaign message it is given: the broadcast lane's slots fill
    // with sends that do not end. A sign-in link asked for then must still go out, on its own lane; with one
    // lane for all mail it would wait behind the held sends for good.
    const autumn = (mail: { headers: Record<string, string> }) => mail.headers.subject === 'Autumn news';
    smtp.delayFor = (mail) => (autumn(mail) ? 10 * 60_000 : 0);
    const before = campaignMail();
    const res = await t.http.post('/auth/magic-link', { email: 'signin@example.com', appId });
    expect(res.status).toBe(200);
    await t.app.get(MagicLinkService).idle();
    const linkRun = worker.processDueJobs();
    const linkAt = () => smtp.received.findIndex((mail) => mail.to.includes('signin@example.com'));
    await waitFor(() => linkAt() >= 0, { describe: () => `${campaignMail()} campaign mails, no link` });

    // Only campaign sends already answered on their way (at most one per slot) arrived in the meantime.
    expect(campaignMail() - before).toBeLessThanOrEqual(BROADCAST_SLOTS);
    expect(campaignMail()).toBeLessThan(PEOPLE);
    smtp.delayFor = () => smtp.delayMs;
    smtp.answerWaiting();

    await Promise.all([campaignRun, linkRun]);
    await worker.processDueJobs();
    expect(campaignMail()).toBe(PEOPLE);

    // The stream shows on the job views, and filters them.
    const jobs = t.app.get(EmailJobsService);
    const transactional = await jobs.list({ stream: 'transactional', page: 1, limit: 10 } as never);
    expect(transactional.items.map((job) => job.stream)).toEqual(['transactional']);
    const broadcast = await jobs.list({ stream: 'broadcast', page: 1, limit: 10 } as never);
    expect(broadcast.items).toHaveLength(10);
    expect(broadcast.items.every((job) => job.campaignId === 'autumn-news')).toBe(true);
  });
});
