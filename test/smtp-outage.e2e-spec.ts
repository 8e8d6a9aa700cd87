import { getModelToken } from '@nestjs/mongoose';
import { createServer, type AddressInfo } from 'node:net';
import type { Model } from 'mongoose';
import { MAIL_TRANSPORT } from '../src/email/delivery/mail-transport.provider';
import type { MailTransport } from '../src/email/delivery/mail-transport';
import { EmailService } from '../src/email/email.service';
import { EmailWorker } from '../src/email/jobs/email-worker';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';

const CONCURRENCY = 4;
const PEOPLE = 60;
const MAX_ATTEMPTS = 2;
const BACKOFF = { baseMs: 100, maxMs: 200 };
/** The circuit's probes: the first 100 ms after it opens, doubling up to 400 ms. */
const CIRCUIT = { firstProbeMs: 100, maxProbeMs: 400 };
/** Far longer than every attempt of a job with its backoff (2 × 200 ms). */
const OUTAGE_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free loopback port: bound, then released, so connections to it are refused until a server listens. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * An SMTP outage of any length is ordinary failure (docs/decisions/queue-outages.md):
 * an attempt that cannot reach the server does not use up the job's attempts, the worker stops claiming
 * while the server is away (one probe send at a time), and sending resumes by itself when it is back.
 */
describe('E-mail queue during an SMTP outage', () => {
  let t: TestApp | undefined;
  let smtp: TestSmtpServer | undefined;

  afterEach(async () => {
    await t?.close();
    t = undefined;
    await smtp?.close();
    smtp = undefined;
    delete process.env.SMTP_URL;
  });

  async function start(smtpUrl: string): Promise<TestApp> {
    process.env.SMTP_URL = smtpUrl;
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
            backoff: BACKOFF,
            circuit: CIRCUIT,
          } satisfies EmailWorkerOptions,
        },
      ],
    });
    await resetDatabase(t.connection);
    return t;
  }

  it('loses no job to an outage longer than its attempts, and probes instead of trying every job', async () => {
    const port = await freePort();
    const t = await start(`smtp://127.0.0.1:${port}`);
    const transport = t.app.get<MailTransport>(MAIL_TRANSPORT);
    const sends = jest.spyOn(transport, 'send');
    const email = t.app.get(EmailService);
    const worker = t.app.get(EmailWorker);
    const people = Array.from({ length: PEOPLE }, (_, i) => `person${i}@example.com`);
    for (const to of people) {
      await email.enqueueEmail({ to, subject: 'Hello', text: 'Hi' }, { maxAttempts: MAX_ATTEMPTS });
    }

    // The server is down: the worker runs as its timer would, every 20 ms.
    const outageStarted = Date.now();
    while (Date.now() < outageStarted + OUTAGE_MS) {
      await worker.processDueJobs();
      await sleep(20);
    }
    const sendsDuringOutage = sends.mock.calls.length;
    // As long as it lasted: a slow machine's last run may end well past OUTAGE_MS.
    const outageMs = Date.now() - outageStarted;

    smtp = await startSmtpServer({ port, closeTimeoutMs: 10 });
    await drainEmailQueue(t);

    const jobs = await t.app
      .get<Model<EmailJob>>(getModelToken(EmailJob.name))
      .find({}, { status: 1, attempts: 1, lastError: 1 })
      .lean()
      .exec();
    expect(jobs.filter((job) => job.status !== 'completed')).toEqual([]);
    expect(smtp.received.map((mail) => mail.to[0]).sort()).toEqual([...people].sort());
    // The sends in flight when the server went away, then one probe per wait (100, 200, 400, 400 … ms) of the
    // outage as it lasted: a slower machine makes fewer probes in the same time, never more.
    const probes = Math.ceil(outageMs / CIRCUIT.maxProbeMs) + 2;
    expect(sendsDuringOutage).toBeLessThanOrEqual(CONCURRENCY + probes);
  });

  it('counts an attempt the server answered with a refusal: a 4xx reply is the message’s fate', async () => {
    smtp = await startSmtpServer({ closeTimeoutMs: 10 });
    smtp.verdict = () => ({ accept: false, code: 451, message: 'Try again later' });
    const t = await start(smtp.url);
    const { id } = await t.app
      .get(EmailService)
      .enqueueEmail({ to: 'ada@example.com', subject: 'Hello', text: 'Hi' }, { maxAttempts: MAX_ATTEMPTS });
    await drainEmailQueue(t);
    const job = await t.app
      .get<Model<EmailJob>>(getModelToken(EmailJob.name))
      .findById(id)
      .lean<EmailJob>()
      .orFail()
      .exec();
    expect(job).toMatchObject({ status: 'dead', attempts: MAX_ATTEMPTS });
    expect(smtp.attempts).toHaveLength(MAX_ATTEMPTS);
  });
});
