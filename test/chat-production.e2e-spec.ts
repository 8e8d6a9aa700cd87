import { getModelToken } from '@nestjs/mongoose';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { Model } from 'mongoose';
import { ChatNotifier } from '../src/chat/chat-notifier';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { CHAT_DELIVERY_OPTIONS } from '../src/chat/delivery/delivery-options';
import { HostResolver } from '../src/chat/delivery/host-resolver';
import { ChatRule } from '../src/chat/schemas/chat-rule.schema';
import { compileApp, createTestApp, TestApp } from './helpers/app';
import {
  chatOutbox,
  drainChat,
  notifications,
  testDeliveryOptions,
  TestResolver,
  waitForNotifications,
} from './helpers/chat';
import { seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { startWebhookReceiver, WebhookReceiver } from './helpers/webhook-receiver';

/**
 * Several app instances over one database, one after the other, as restarts and deployments are: the
 * outbox outlives a process, and a process in production refuses non-public destinations.
 */
describe('Chat notifications across restarts and in production', () => {
  let receiver: WebhookReceiver;
  let appId: string;
  const options = testDeliveryOptions();
  // A name that resolves to a public address when a rule is created, and to loopback afterwards.
  let rebindLookups = 0;
  const resolver = new TestResolver({
    'chat.example.com': ['93.184.216.34'],
    'internal.example.com': ['93.184.216.34', '10.0.0.7'],
    'rebind.example.com': () => (++rebindLookups === 1 ? ['93.184.216.34'] : ['127.0.0.1']),
    'nowhere.example.com': () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example.com'), { code: 'ENOTFOUND' });
    },
  });
  const overrides = [
    { provide: CHAT_DELIVERY_OPTIONS, useValue: options },
    { provide: HostResolver, useValue: resolver },
  ];

  const boot = async (nodeEnv: 'test' | 'production') => {
    process.env.NODE_ENV = nodeEnv;
    // Production refuses the tests' cheap bcrypt cost.
    process.env.BCRYPT_COST = nodeEnv === 'production' ? '10' : '4';
    // ... and TRUST_PROXY=true: the tests' requests come from the loopback address.
    process.env.TRUST_PROXY = nodeEnv === 'production' ? 'loopback' : 'true';
    // ... and a placeholder From or link host.
    if (nodeEnv === 'production') {
      process.env.MAIL_FROM = 'news@mail.example.com';
      process.env.PUBLIC_BASE_URL = 'https://mail.example.com';
    } else {
      delete process.env.MAIL_FROM;
      delete process.env.PUBLIC_BASE_URL;
    }
    // ... and mail to files unless asked for.
    process.env.EMAIL_TRANSPORT = 'outbox';
    const t = await createTestApp({ overrides });
    return { t, admin: await createSession(t) };
  };
  const sendFeedback = (t: TestApp, subject: string) =>
    t.http.post(`/${appId}/feedback`, { type: 'praise', subject, message: 'Nice.' });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    process.env.NODE_ENV = 'test';
  });

  describe('in development', () => {
    let t: TestApp;
    let admin: Session;

    afterEach(async () => {
      await t?.close();
    });

    /** An app whose feedback goes to the receiver. */
    const seedRoutedApp = async () => {
      appId = (await seedApp(t, { name: 'Restart Shop' })).id;
      const rule = await admin.http.post('/admin/chat-routing', {
        appId,
        channel: 'feedback',
        webhookUrl: `${receiver.url}/hook`,
      });
      expect(rule.status).toBe(201);
    };

    it('delivers after a restart what the stopped instance had stored', async () => {
      ({ t, admin } = await boot('test'));
      await seedRoutedApp();
      expect((await sendFeedback(t, 'Before the restart')).status).toBe(201);
      await waitForNotifications(t, 1);
      await t.close();
      expect(receiver.calls).toEqual([]);

      ({ t, admin } = await boot('test'));
      await drainChat(t);
      expect(receiver.calls.map((c) => c.body.data.subject)).toEqual(['Before the restart']);
    });

    it('takes back what a crashed worker held once its lease lapses', async () => {
      ({ t, admin } = await boot('test'));
      receiver.reset();
      await seedRoutedApp();
      expect((await sendFeedback(t, 'Held by a crashed worker')).status).toBe(201);
      const [stored] = await waitForNotifications(t, 1, { status: 'pending' });
      await chatOutbox(t).collection.updateOne(
        { _id: stored._id },
        {
          $set: {
            status: 'processing',
            attempts: 1,
            lockToken: 'gone',
            leaseExpiresAt: new Date(Date.now() - 1),
          },
          $unset: { claimKey: '' },
        },
      );
      const run = await t.app.get(ChatDeliveryWorker).processDue();
      expect(run).toMatchObject({ reaped: 1, delivered: 1 });
      expect(receiver.calls.map((c) => c.body.data.subject)).toEqual(['Held by a crashed worker']);
      expect((await notifications(t, { _id: stored._id }))[0]).toMatchObject({
        status: 'delivered',
        attempts: 2,
        lastError: 'The worker stopped during delivery; tried again',
      });
    });

    it('delivers in the background and schedules the digest when the worker is enabled', async () => {
      process.env.CHAT_WORKER_ENABLED = 'true';
      process.env.CHAT_WORKER_INTERVAL_MS = '100';
      process.env.CHAT_DIGEST_CRON = '30 7 * * *';
      try {
        ({ t, admin } = await boot('test'));
      } finally {
        process.env.CHAT_WORKER_ENABLED = 'false';
      }
      receiver.reset();
      await seedRoutedApp();
      expect((await sendFeedback(t, 'Nobody drives this worker')).status).toBe(201);
      await receiver.waitForCalls(1);
      expect(receiver.calls[0].body.data.subject).toBe('Nobody drives this worker');
      const digest = t.app.get(SchedulerRegistry).getCronJob('chat-digest');
      expect(digest.cronTime.source).toBe('30 7 * * *');
      expect(digest.isActive).toBe(true);
    });

    it('writes the notification to the log when neither a rule nor a default is set', async () => {
      ({ t, admin } = await boot('test'));
      receiver.reset();
      const quiet = await seedApp(t);
      const res = await t.http.post(`/${quiet.id}/feedback`, {
        type: 'bug',
        subject: 'Logged',
        message: 'M',
      });
      expect(res.status).toBe(201);
      await waitForNotifications(t, 1, { appId: quiet.id });
      await drainChat(t);
      expect((await notifications(t, { appId: quiet.id }))[0]).toMatchObject({
        status: 'delivered',
        destination: 'log',
        attempts: 1,
      });
      expect(receiver.calls).toEqual([]);
    });
  });

  describe('in production', () => {
    let t: TestApp;
    let admin: Session;

    beforeAll(async () => {
      ({ t, admin } = await boot('production'));
      appId = (await seedApp(t, { name: 'Production Shop' })).id;
    });
    afterAll(() => t.close());

    const create = (webhookUrl: string, channel = 'tickets') =>
      admin.http.post('/admin/chat-routing', { appId, channel, webhookUrl });

    it.each([
      ['loopback', 'http://127.0.0.1:8080/hook', '127.0.0.1 is not a public address'],
      ['a private address', 'http://10.1.2.3/hook', '10.1.2.3 is not a public address'],
      [
        'cloud metadata',
        'http://169.254.169.254/latest/meta-data',
        '169.254.169.254 is not a public address',
      ],
      ['IPv6 loopback', 'http://[::1]:8080/hook', '::1 is not a public address'],
      ['a name of loopback', 'http://localhost:8080/hook', 'its host localhost resolves to'],
      [
        'a name with one private address',
        'https://internal.example.com/hook',
        'its host internal.example.com resolves to 10.0.0.7',
      ],
      [
        'a name that does not resolve',
        'https://nowhere.invalid/hook',
        'its host nowhere.invalid does not resolve',
      ],
    ])('refuses a rule to %s (400)', async (_name, webhookUrl, reason) => {
      const res = await create(webhookUrl);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: expect.stringContaining(`webhookUrl is refused: ${reason}`),
      });
      const patch = await create('https://chat.example.com/hook', 'agent');
      expect(patch.status).toBe(201);
      const moved = await admin.http.patch(`/admin/chat-routing/${patch.body.data._id}`, { webhookUrl });
      expect(moved.status).toBe(400);
      await admin.http.delete(`/admin/chat-routing/${patch.body.data._id}`);
    });

    it('accepts a rule whose host resolves to public addresses', async () => {
      const res = await create('https://chat.example.com/hooks/abc', 'inbound');
      expect(res.status).toBe(201);
    });

    it('refuses at sending a rule stored in development that points at a local receiver', async () => {
      receiver.reset();
      // Stored as the development instance would have (no address check there).
      await t.app
        .get<Model<ChatRule>>(getModelToken(ChatRule.name))
        .create({ appId, channel: 'feedback', webhookUrl: `${receiver.url}/hook`, active: true });
      expect((await sendFeedback(t, 'Sent in production')).status).toBe(201);
      const [stored] = await waitForNotifications(t, 1, { 'data.subject': 'Sent in production' });
      await drainChat(t);
      expect((await notifications(t, { _id: stored._id }))[0]).toMatchObject({
        status: 'dead',
        attempts: 1,
        destination: 'rule',
        lastError: 'Refused: 127.0.0.1 is not a public address',
      });
      expect(receiver.calls).toEqual([]);
    });

    it('checks the address it connects to, so a name that changes its address (DNS rebinding) is refused', async () => {
      receiver.reset();
      const rule = await create(`http://rebind.example.com:${receiver.port}/hook`, 'wants');
      expect(rule.status).toBe(201);
      t.app.get(ChatNotifier).notify({
        appId,
        channel: 'wants',
        event: 'want.created',
        summary: 'New want',
        data: { title: 'Rebound' },
      });
      await waitForNotifications(t, 1, { 'data.title': 'Rebound' });
      await drainChat(t);
      expect((await notifications(t, { 'data.title': 'Rebound' }))[0]).toMatchObject({
        status: 'dead',
        lastError: 'Refused: rebind.example.com resolves to 127.0.0.1, not a public address',
      });
      expect(rebindLookups).toBe(2);
      expect(receiver.calls).toEqual([]);
    });

    it('does not start with a CHAT_DEFAULT_WEBHOOK_URL that is not public', async () => {
      for (const url of ['http://127.0.0.1:9/hook', 'https://internal.example.com/hook']) {
        process.env.CHAT_DEFAULT_WEBHOOK_URL = url;
        const app = await compileApp({ overrides });
        await expect(app.init()).rejects.toThrow(/CHAT_DEFAULT_WEBHOOK_URL is refused/);
        await app.close();
      }
      delete process.env.CHAT_DEFAULT_WEBHOOK_URL;
    });
  });
});
