import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ChatNotifier } from '../src/chat/chat-notifier';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { CHAT_DELIVERY_OPTIONS } from '../src/chat/delivery/delivery-options';
import { ChatNotification } from '../src/chat/schemas/chat-notification.schema';
import { EmailService } from '../src/email/email.service';
import { EmailJobStore } from '../src/email/jobs/email-job.store';
import { RecipientJobsService } from '../src/email/jobs/recipient-jobs.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { testDeliveryOptions, waitForNotifications } from './helpers/chat';
import { drainEmailQueue, firstDue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSessions } from './helpers/session';
import { startWebhookReceiver, WebhookReceiver } from './helpers/webhook-receiver';

const DAY_MS = 86_400_000;

/**
 * Ended e-mail jobs and chat notifications carry `expiresAt` = end + the configured days, and a TTL index
 * at 0 s removes them then. The dev database (mongo-java-server) keeps the index but has no TTL monitor, so
 * these tests check the index and the dates, not the removal itself (MongoDB's monitor runs every 60 s).
 */
describe('Data retention of e-mail jobs and chat notifications', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const jobs = () => t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  const outbox = () => t.app.get<Model<ChatNotification>>(getModelToken(ChatNotification.name));
  // Retries wait longer than a test, so a notification answered 503 stays `failed`.
  const chatOptions = testDeliveryOptions({ backoff: { baseMs: 60_000, maxMs: 60_000 } });
  const start = () =>
    createTestApp({ overrides: [{ provide: CHAT_DELIVERY_OPTIONS, useValue: chatOptions }] });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    process.env.EMAIL_JOB_RETENTION_DAYS = '3';
    process.env.CHAT_NOTIFICATION_RETENTION_DAYS = '5';
    t = await start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    delete process.env.EMAIL_JOB_RETENTION_DAYS;
    delete process.env.CHAT_NOTIFICATION_RETENTION_DAYS;
  });
  beforeEach(() => resetDatabase(t.connection));

  it.each([
    ['email_jobs', { sparse: true }],
    ['chat_notifications', {}],
  ])('%s has a TTL index on expiresAt that expires at the stored date', async (collection, extra) => {
    const indexes = await t.connection.db!.collection(collection).listIndexes().toArray();
    const ttl = indexes.find((index) => JSON.stringify(index.key) === '{"expiresAt":1}');
    expect(ttl).toMatchObject({ expireAfterSeconds: 0, ...extra });
  });

  it('sets expiresAt when the worker completes a job or ends it dead, never on an open job', async () => {
    const email = t.app.get(EmailService);
    await email.enqueueEmail({ to: 'done@example.com', subject: 'Hi', text: 'Sent' });
    await email.enqueueBatchPlan({ kind: 'no-such-planner' });
    await email.enqueueEmail(
      { to: 'later@example.com', subject: 'Hi', text: 'Tomorrow' },
      { scheduledAt: new Date(Date.now() + DAY_MS) },
    );
    await drainEmailQueue(t, { dueOnly: true });

    const all = await jobs().find().lean<EmailJob[]>().exec();
    const byStatus = Object.fromEntries(all.map((job) => [job.status, job]));
    expect(Object.keys(byStatus).sort()).toEqual(['completed', 'dead', 'pending']);
    for (const ended of [byStatus.completed, byStatus.dead]) {
      expect(ended.expiresAt!.getTime() - ended.completedAt!.getTime()).toBe(3 * DAY_MS);
    }
    expect(byStatus.pending.expiresAt).toBeUndefined();
  });

  it('sets expiresAt when a lapsed lease is reaped and when an erasure cancels a job', async () => {
    const email = t.app.get(EmailService);
    const store = t.app.get(EmailJobStore);
    await email.enqueueEmail({ to: 'crash@example.com', subject: 'Hi', text: 'Lost worker' });
    // A worker that claimed the job, handed it to the transport and died: its lease has already lapsed.
    await store.claimMany(await firstDue(t, 10), () => 'dead-worker-token', -1_000);
    await store.markHanded(['dead-worker-token']);
    expect((await store.reapLapsedLeases()).dead).toBe(1);

    await email.enqueueEmail({ to: 'erased@example.com', subject: 'Hi', text: 'Never sent' });
    await t.app.get(RecipientJobsService).erase('erased@example.com', 'erased-person@invalid');

    const ended = await jobs().find().lean<EmailJob[]>().exec();
    expect(ended.map((job) => job.status)).toEqual(['dead', 'dead']);
    for (const job of ended) expect(job.expiresAt!.getTime() - job.completedAt!.getTime()).toBe(3 * DAY_MS);
  });

  it('sets expiresAt on delivered and dead chat notifications, not on those still to deliver', async () => {
    const { admin } = await createSessions(t);
    const [delivered, refused, retried] = [await seedApp(t), await seedApp(t), await seedApp(t)];
    receiver.answer = (call) =>
      call.path === '/refused'
        ? { status: 400 }
        : call.path === '/retried'
          ? { status: 503 }
          : { status: 200 };
    for (const [app, path] of [
      [delivered, 'ok'],
      [refused, 'refused'],
      [retried, 'retried'],
    ] as const) {
      const rule = { appId: app.id, channel: 'tickets', webhookUrl: `${receiver.url}/${path}` };
      expect((await admin.http.post('/admin/chat-routing', rule)).status).toBe(201);
      t.app
        .get(ChatNotifier)
        .notify({ appId: app.id, channel: 'tickets', event: 'ticket.created', summary: 'New' });
    }
    await waitForNotifications(t, 3);
    await t.app.get(ChatDeliveryWorker).processDue();

    const byApp = new Map(
      (await outbox().find().lean<ChatNotification[]>().exec()).map((n) => [n.appId, n] as const),
    );
    const ok = byApp.get(delivered.id)!;
    expect(ok.status).toBe('delivered');
    expect(ok.expiresAt!.getTime() - ok.deliveredAt!.getTime()).toBe(5 * DAY_MS);
    const dead = byApp.get(refused.id)!;
    expect(dead.status).toBe('dead');
    expect(dead.expiresAt!.getTime() - dead.updatedAt.getTime()).toBe(5 * DAY_MS);
    const failed = byApp.get(retried.id)!;
    expect(failed.status).toBe('failed');
    expect(failed.expiresAt).toBeUndefined();
  });

  it('applies a changed retention at restart to what ends from then on, with the same index', async () => {
    const email = t.app.get(EmailService);
    await email.enqueueEmail({ to: 'before@example.com', subject: 'Hi', text: 'Three days' });
    await drainEmailQueue(t);

    await t.close();
    process.env.EMAIL_JOB_RETENTION_DAYS = '10';
    t = await start();
    await t.app.get(EmailService).enqueueEmail({ to: 'after@example.com', subject: 'Hi', text: 'Ten days' });
    await drainEmailQueue(t);

    const kept = await jobs().find().sort({ createdAt: 1 }).lean<EmailJob[]>().exec();
    const days = kept.map((job) => (job.expiresAt!.getTime() - job.completedAt!.getTime()) / DAY_MS);
    expect(days).toEqual([3, 10]);
    const indexes = await t.connection.db!.collection('email_jobs').listIndexes().toArray();
    expect(indexes.filter((index) => 'expireAfterSeconds' in index)).toEqual([
      expect.objectContaining({ key: { expiresAt: 1 }, expireAfterSeconds: 0 }),
    ]);
  });
});
