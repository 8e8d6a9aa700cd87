import { getModelToken } from '@nestjs/mongoose';
import { randomBytes } from 'node:crypto';
import type { Model } from 'mongoose';
import { Webhook } from 'standardwebhooks';
import { planIndexes } from '../src/database/index-plan';
import { EmailService } from '../src/email/email.service';
import type { JobOf } from '../src/queue/queue-kind';
import type { EmailKindTypes } from '../src/email/jobs/email-kind';
import { EmailJobStore, LAPSED_DELIVERY_ERROR } from '../src/email/jobs/email-job.store';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { MessageLedgerEntry, MessageLedgerSchema } from '../src/email/jobs/schemas/message-ledger.schema';
import { SendEmailHandler } from '../src/email/jobs/send-email.handler';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { TrackingEvents } from '../src/email/tracking/tracking-events';
import { TestApp } from './helpers/app';
import { drainEmailQueue, firstDue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { useMailApp } from './helpers/mail-app';
import { TestSmtpServer } from './helpers/smtp';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const LEASE_MS = 60_000;
const DAY_MS = 86_400_000;
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 4,
  ratePerSecond: 0,
  leaseMs: LEASE_MS,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 20,
  backoff: { baseMs: 100, maxMs: 2_000 },
};
/** Set for this file, so the test shows the setting is what the entry's expiry follows. */
const MESSAGE_RETENTION_DAYS = 90;

/** A hard bounce as the primary provider sends it, signed like its deliveries. */
function signedBounce(messageId: string, to: string) {
  const body = JSON.stringify({
    type: 'email.bounced',
    created_at: new Date().toISOString(),
    data: { email_id: messageId, to: [to], bounce: { type: 'Permanent', message: '550 no such user' } },
  });
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const sentAt = new Date();
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(SECRET).sign(id, sentAt, body),
    },
  };
}

/**
 * The message ledger (docs/operations/data-retention.md): what bounces, complaints and idempotency keys need
 * of a message outlives its job. The dev database never runs TTL, so a job's expiry is its deletion here.
 */
describe('Message ledger: retention that keeps what later steps need', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let admin: Session;
  let viewer: Session;
  let appId: string;
  let jobs: Model<EmailJob>;
  let ledger: Model<MessageLedgerEntry>;

  const mailApp = useMailApp({
    env: {
      MAIL_FROM: 'News <news@mail.example.com>',
      WEBHOOK_SECRET: SECRET,
      EMAIL_MESSAGE_RETENTION_DAYS: String(MESSAGE_RETENTION_DAYS),
    },
    overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }],
    beforeReset: (app) => app.app.get(TrackingEvents).flush(),
  });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    ledger = t.app.get<Model<MessageLedgerEntry>>(getModelToken(MessageLedgerEntry.name));
  });
  beforeEach(async () => {
    ({ admin, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const enqueue = (to: string, idempotencyKey?: string) =>
    t.app
      .get(EmailService)
      .enqueueEmail({ to, appId, subject: 'Your order', text: 'Shipped' }, { idempotencyKey });
  /** What MongoDB's TTL monitor does once the job's `expiresAt` has passed. */
  const expire = async (jobId: string) => {
    const { deletedCount } = await jobs.deleteOne({ _id: jobId }).exec();
    expect(deletedCount).toBe(1);
  };
  const deliverBounce = (messageId: string, to: string) => {
    const { body, headers } = signedBounce(messageId, to);
    return t.http.request('POST', '/email-events/primary-provider', { payload: body, headers });
  };
  const bouncedInOverview = async () => {
    await t.app.get(TrackingEvents).flush();
    const res = await viewer.http.get(`/admin/email-events/analytics/overview?appId=${appId}`);
    expect(res.status).toBe(200);
    return res.body.data.totalBounced as number;
  };

  it('a hard bounce after the job expired still suppresses the address and counts in the analytics', async () => {
    const job = await enqueue('gone@example.com');
    await drainEmailQueue(t);
    expect(smtp.received.map((mail) => mail.to)).toEqual([['gone@example.com']]);
    const { messageId } = await jobs.findById(job.id).lean<EmailJob>().orFail().exec();
    const before = await ledger.findById(job.id).lean<MessageLedgerEntry>().orFail().exec();
    expect(before).toMatchObject({ messageId, to: 'gone@example.com', appId, provider: 'smtp' });
    expect(before.sentAt).toBeInstanceOf(Date);
    await expire(job.id);

    const res = await deliverBounce(messageId!, 'gone@example.com');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, processed: true });
    expect(await t.app.get(SuppressionService).find('gone@example.com')).toMatchObject({
      reason: 'hard_bounce',
    });
    expect(await bouncedInOverview()).toBe(1);

    // Retention is measured from the last event: the bounce moved the entry's expiry.
    const after = await ledger.findById(job.id).lean<MessageLedgerEntry>().orFail().exec();
    expect(after.lastEventAt.getTime()).toBeGreaterThanOrEqual(before.lastEventAt.getTime());
    expect(after.expiresAt.getTime() - after.lastEventAt.getTime()).toBe(MESSAGE_RETENTION_DAYS * DAY_MS);

    // A later campaign or transactional mail to the address is skipped.
    smtp.received.length = 0;
    await enqueue('gone@example.com');
    await drainEmailQueue(t);
    expect(smtp.received).toEqual([]);
  });

  it('an idempotency key reused after its job expired does not send again', async () => {
    const first = await enqueue('buyer@example.com', 'order-4711-shipped');
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(1);
    await expire(first.id);

    const again = await enqueue('buyer@example.com', 'order-4711-shipped');
    expect(again).toEqual({ id: first.id, idempotencyKey: 'order-4711-shipped', created: false });
    // In a batch too, beside a key that is new.
    const [known, fresh] = await t.app.get(EmailService).enqueueEmails([
      {
        message: { to: 'buyer@example.com', appId, subject: 'S', text: 'T' },
        options: { idempotencyKey: 'order-4711-shipped' },
      },
      {
        message: { to: 'buyer@example.com', appId, subject: 'S', text: 'T' },
        options: { idempotencyKey: 'order-4712-shipped' },
      },
    ]);
    expect(known).toMatchObject({ id: first.id, created: false });
    expect(fresh.created).toBe(true);
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(2);
    expect(await jobs.countDocuments({ idempotencyKey: 'order-4711-shipped' }).exec()).toBe(0);
  });

  it('a worker that dies between the send and its outcome loses neither the entry nor sends twice', async () => {
    const job = await enqueue('crash@example.com', 'welcome-crash');
    // The entry exists before any worker can take the job.
    expect(await ledger.findById(job.id).lean<MessageLedgerEntry>().exec()).toMatchObject({
      idempotencyKey: 'welcome-crash',
      to: 'crash@example.com',
    });

    // A worker claims it, marks it handed and sends it; then its process dies before the outcome write.
    const store = t.app.get(EmailJobStore);
    const [claimed] = await store.claimMany(await firstDue(t, 1), () => 'dying-worker', LEASE_MS);
    // A job of the store is the handler's once its type is known (the engine's dispatch does the same).
    const sendJob = claimed.job as Omit<EmailJob, 'payload'> as JobOf<EmailKindTypes, 'email.send'>;
    await t.app.get(SendEmailHandler).send(sendJob, {
      lockToken: claimed.lockToken,
      fail: (error) => ({ status: 'dead', error: String(error) }),
      scan: { suppressed: new Map(), memo: new Map() },
      handed: async () => {
        await store.markHanded([claimed.lockToken]);
      },
    });
    expect(smtp.received).toHaveLength(1);
    const reaped = await store.reapLapsedLeases(new Date(Date.now() + LEASE_MS + 1_000));
    expect(reaped.dead).toBe(1);
    const dead = await jobs.findById(job.id).lean<EmailJob>().orFail().exec();
    expect(dead).toMatchObject({ status: 'dead', lastError: LAPSED_DELIVERY_ERROR });
    expect(dead.messageId).toBeUndefined();
    await expire(job.id);

    // The key does not send again, and the provider's bounce still finds its message.
    expect(await enqueue('crash@example.com', 'welcome-crash')).toMatchObject({ id: job.id, created: false });
    await drainEmailQueue(t);
    expect(smtp.received).toHaveLength(1);
    // The provider names the message by the Message-ID it received.
    const messageId = smtp.received[0].headers['message-id'];
    expect(messageId).toBe(`<${job.id}@mail.example.com>`);
    expect((await deliverBounce(messageId, 'crash@example.com')).body).toMatchObject({ processed: true });
    expect(await t.app.get(SuppressionService).find('crash@example.com')).toMatchObject({
      reason: 'hard_bounce',
    });
  });

  it('a send whose queueing entry was lost creates the entry when its outcome is recorded', async () => {
    const job = await enqueue('repair@example.com', 'repair-key');
    await ledger.deleteOne({ _id: job.id }).exec();
    await drainEmailQueue(t);
    expect(await ledger.findById(job.id).lean<MessageLedgerEntry>().exec()).toMatchObject({
      idempotencyKey: 'repair-key',
      to: 'repair@example.com',
      appId,
      messageId: `${job.id}@mail.example.com`,
    });
  });

  it('declares a TTL index on expiresAt (expiry at the stored date) in the index plan', async () => {
    expect(MessageLedgerSchema.indexes()).toContainEqual([
      { expiresAt: 1 },
      expect.objectContaining({ expireAfterSeconds: 0 }),
    ]);
    const plan = (await planIndexes(t.connection)).find((p) => p.collection === 'email_messages');
    expect(plan).toBeDefined();
    expect(plan!.conflicts).toEqual([]);
    // Declared and either built with that option (no conflict) or still to be built by `npm run db:indexes`.
    const built = await t.connection.db!.collection('email_messages').indexes();
    const ttl = [...plan!.missing, ...built].find((index) => 'expiresAt' in index.key);
    expect(ttl).toMatchObject({ key: { expiresAt: 1 } });
    expect('options' in ttl! ? ttl.options : ttl).toMatchObject({ expireAfterSeconds: 0 });
  });

  it('a GDPR erasure replaces the address (and a key naming it) in the ledger', async () => {
    const job = await enqueue('erase-me@example.com', 'invite:erase-me@example.com');
    await drainEmailQueue(t);
    const created = await admin.http.post(`/admin/${appId}/newsletter/subscribers`, {
      email: 'erase-me@example.com',
    });
    expect(created.status).toBe(201);
    const contactId = created.body.data._id as string;
    const erased = await admin.http.delete(`/admin/contacts/${contactId}`);
    expect(erased.status).toBeLessThan(300);
    const entry = await ledger.findById(job.id).lean<MessageLedgerEntry>().orFail().exec();
    expect(entry.to).toBe(`erased-${contactId}@erased.invalid`);
    expect(entry.idempotencyKey).toBe(`erased:${job.id}`);
  });
});
