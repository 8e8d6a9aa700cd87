import { Types } from 'mongoose';
import { EmailService } from '../src/email/email.service';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { drainEmailQueue } from './helpers/email-queue';
import { subscriberDocument } from './helpers/factories';
import { useMailApp } from './helpers/mail-app';
import { createSessions } from './helpers/session';

const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 2,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 50, maxMs: 200 },
};

const TO = 'full@example.com';
const CAMPAIGN = '65a000000000000000000001';

/**
 * The soft-bounce rule (docs/operations/email-delivery.md "Soft bounces"), here with SOFT_BOUNCE_LIMIT=2 and
 * SOFT_BOUNCE_WINDOW=3: two soft bounces among an address's last three messages suppress its broadcasts
 * until a later delivery or a staff action.
 */
describe('Soft-bounce rule', () => {
  const mailApp = useMailApp({
    env: { MAIL_FROM: 'Shop <news@mail.example.com>', SOFT_BOUNCE_LIMIT: '2', SOFT_BOUNCE_WINDOW: '3' },
    overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }],
  });
  let mailboxFull = false;
  beforeEach(() => {
    mailboxFull = false;
    mailApp.smtp.rcptVerdict = () =>
      mailboxFull ? { accept: false, code: 452, message: '4.2.2 Mailbox full' } : { accept: true };
  });

  const suppression = () => mailApp.t.app.get(SuppressionService);
  /** One message to TO (a single attempt: a 4xx is at once its last, a soft bounce); its job's result. */
  async function send(full: boolean, campaignId?: string) {
    mailboxFull = full;
    const { id } = await mailApp.t.app
      .get(EmailService)
      .enqueueEmail({ to: TO, campaignId, subject: 'Hi', text: 'Hi' }, { maxAttempts: 1 });
    await drainEmailQueue(mailApp.t);
    const job = await mailApp.t.connection
      .db!.collection('email_jobs')
      .findOne({ _id: new Types.ObjectId(id) });
    return job!;
  }

  it('suppresses broadcasts after N soft bounces in the last M messages, until a delivery', async () => {
    await send(true);
    await send(false);
    await send(false);
    await send(true);
    // Last three: delivered, delivered, soft: one soft bounce in the window.
    expect(await suppression().isSuppressed(TO)).toBe(false);
    await send(true);
    // Last three: delivered, soft, soft.
    expect(await suppression().find(TO)).toMatchObject({ reason: 'soft_bounce', source: 'soft-bounce-rule' });

    mailboxFull = false;
    const broadcast = await send(false, CAMPAIGN);
    expect(broadcast.result).toEqual({ skipped: 'suppressed', reason: 'soft_bounce', stream: 'broadcast' });
    // Mail the person asked for still goes; its delivery ends the suppression.
    const transactional = await send(false);
    expect(transactional.status).toBe('completed');
    expect(await suppression().isSuppressed(TO)).toBe(false);
    expect((await send(false, CAMPAIGN)).result).toMatchObject({ accepted: [TO] });
  });

  it('is lifted by a staff action (consent given again), never a hard bounce with it', async () => {
    const { admin } = await createSessions(mailApp.t);
    const person = subscriberDocument('shop', TO);
    await mailApp.t.connection.db!.collection('contacts').insertOne(person);
    await send(true);
    await send(true);
    expect(await suppression().find(TO)).toMatchObject({ reason: 'soft_bounce' });
    const res = await admin.http.patch(`/admin/contacts/${String(person._id)}/consent`, {
      category: 'blog',
      status: true,
    });
    expect(res.status).toBe(200);
    expect(await suppression().isSuppressed(TO)).toBe(false);
  });
});
