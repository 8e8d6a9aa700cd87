import { EventEmitter2 } from '@nestjs/event-emitter';
import { getModelToken } from '@nestjs/mongoose';
import { EmailEvents } from '../src/email/email.events';
import { Types, type Model } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { CampaignProgress } from '../src/newsletter/campaigns/campaign-progress';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp, subscriberDocument } from './helpers/factories';
import { useMailApp } from './helpers/mail-app';
import { createSessions, type Session } from './helpers/session';

/** Short retry delays, so a job's last attempt comes within the test. */
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 4,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 50, maxMs: 200 },
};

const MISSING = ['nobody1@example.com', 'nobody2@example.com', 'nobody3@example.com'];
const PRESENT = ['ada@example.com', 'bob@example.com', 'cyd@example.com', 'dan@example.com'];

/**
 * The SMTP server's own answers are bounces (docs/operations/email-delivery.md "Bounces"): a 5xx to RCPT is
 * a hard bounce (suppressed, subscriber `bounced`, the same event as a provider's), a 4xx on the last attempt
 * a soft one. Measured here: the addresses that answered 550 in a first campaign, mailed in a second.
 */
describe('SMTP refusals as bounces', () => {
  const mailApp = useMailApp({
    env: { MAIL_FROM: 'Shop <news@mail.example.com>' },
    overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }],
  });
  let admin: Session;
  let appId: string;
  beforeEach(async () => {
    ({ admin } = await createSessions(mailApp.t));
    appId = (await seedApp(mailApp.t)).id;
    mailApp.smtp.rcptAttempts.length = 0;
    mailApp.smtp.rcptVerdict = (address) =>
      MISSING.includes(address)
        ? { accept: false, code: 550, message: '5.1.1 <' + address + '>: Recipient address rejected' }
        : { accept: true };
  });

  const db = () => mailApp.t.connection.db!;
  const drain = async () => {
    await drainEmailQueue(mailApp.t);
    await mailApp.t.app.get(CampaignProgress).flush();
  };
  const asked = (address: string) => mailApp.smtp.rcptAttempts.filter((rcpt) => rcpt.to === address).length;

  async function sendCampaign(name: string): Promise<string> {
    const base = `/admin/${appId}/newsletter/campaigns`;
    const created = await admin.http.post(base, { name, subject: 'News', htmlContent: '<p>News</p>' });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    expect((await admin.http.post(`${base}/${id}/send`)).status).toBe(200);
    await drain();
    return id;
  }

  it('a 550 to RCPT suppresses the address and marks the subscriber bounced: a second campaign skips it', async () => {
    await db()
      .collection('contacts')
      .insertMany([...MISSING, ...PRESENT].map((email) => subscriberDocument(appId, email)));

    const first = await sendCampaign('First');
    for (const address of MISSING) expect(asked(address)).toBe(1);
    const suppression = mailApp.t.app.get(SuppressionService);
    for (const address of MISSING) {
      expect(await suppression.find(address)).toMatchObject({
        reason: 'hard_bounce',
        source: 'webhook:primary',
      });
      const person = await db().collection('contacts').findOne({ email: address });
      expect(person?.subscriptions[0].status).toBe('bounced');
    }
    const bounces = await db()
      .collection('email_events')
      .find({ campaignId: first, type: 'bounced' })
      .toArray();
    expect(bounces).toHaveLength(MISSING.length);
    for (const event of bounces) expect(event).toMatchObject({ bounceType: 'hard', provider: 'primary' });
    for (const address of PRESENT) expect(await suppression.isSuppressed(address)).toBe(false);

    mailApp.smtp.rcptAttempts.length = 0;
    await sendCampaign('Second');
    const mailedAgain = MISSING.filter((address) => asked(address) > 0);
    // The figure the report names: addresses that answered 550, mailed again by the second campaign.
    expect(mailedAgain).toEqual([]);
    for (const address of PRESENT) expect(asked(address)).toBe(1);
  });

  it('a refusal reported twice for one job is one event, and the job is not tried again', async () => {
    const email = mailApp.t.app.get(EmailService);
    const { id } = await email.enqueueEmail({ to: MISSING[0], subject: 'Hi', text: 'Hi' });
    await drain();
    const job = await mailApp.t.app
      .get<Model<EmailJob>>(getModelToken(EmailJob.name))
      .findById(id)
      .lean<EmailJob>()
      .orFail()
      .exec();
    expect(job.status).toBe('dead');
    expect(await db().collection('email_events').countDocuments({ type: 'bounced' })).toBe(1);
    // The same refusal reported again (a worker that died before recording the outcome, then retried): one.
    await mailApp.t.app
      .get(EventEmitter2)
      .emitAsync(EmailEvents.SmtpBounce, { jobId: id, bounceType: 'hard', response: '550 5.1.1' });
    expect(await db().collection('email_events').countDocuments({ type: 'bounced' })).toBe(1);
    // And the job sent again is skipped before SMTP: the address is suppressed for every stream.
    await db()
      .collection('email_jobs')
      .updateOne(
        { _id: new Types.ObjectId(id) },
        { $set: { status: 'failed', scheduledAt: new Date(), attempts: 0, claimKey: `${id}.0` } },
      );
    await drain();
    expect(asked(MISSING[0])).toBe(1);
  });

  it('a 4xx is retried; on the last attempt it is a soft bounce, which alone suppresses nothing', async () => {
    mailApp.smtp.rcptVerdict = () => ({ accept: false, code: 452, message: '4.2.2 Mailbox full' });
    const email = mailApp.t.app.get(EmailService);
    await email.enqueueEmail({ to: 'full@example.com', subject: 'Hi', text: 'Hi' }, { maxAttempts: 2 });
    await drain();
    expect(asked('full@example.com')).toBe(2);
    const events = await db().collection('email_events').find({ type: 'bounced' }).toArray();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ bounceType: 'soft' });
    expect(await mailApp.t.app.get(SuppressionService).isSuppressed('full@example.com')).toBe(false);
  });
});
