import { App } from '../src/apps/schemas/app.schema';
import { ChatDigest } from '../src/chat/chat-digest';
import { ChatNotifier } from '../src/chat/chat-notifier';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { CHAT_DELIVERY_OPTIONS } from '../src/chat/delivery/delivery-options';
import { HostResolver } from '../src/chat/delivery/host-resolver';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import {
  chatOutbox,
  drainChat,
  makeRetriesDue,
  notifications,
  RETRY_WAIT_MS,
  testDeliveryOptions,
  TestResolver,
  waitForNotifications,
} from './helpers/chat';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { startWebhookReceiver, WebhookReceiver } from './helpers/webhook-receiver';

const ORIGIN = 'https://www.shop.test';

/**
 * Notifications from the domain events to real HTTP receivers: the app's rule, else the default
 * (`CHAT_DEFAULT_WEBHOOK_URL`, the second receiver). The worker is driven by hand.
 */
describe('Chat notifications: outbox, routing and delivery', () => {
  let ruled: WebhookReceiver;
  let fallback: WebhookReceiver;
  let t: TestApp;
  let admin: Session;
  let user: Session;
  let app: App;
  let ip = 0;
  const options = testDeliveryOptions();
  // hooks.slack.com and discord.com are the local receiver here: the kinds are chosen by host name.
  const resolver = new TestResolver({ 'hooks.slack.com': ['127.0.0.1'], 'discord.com': ['127.0.0.1'] });

  beforeAll(async () => {
    ruled = await startWebhookReceiver();
    fallback = await startWebhookReceiver();
    process.env.CHAT_DEFAULT_WEBHOOK_URL = `${fallback.url}/default-hook`;
    t = await createTestApp({
      overrides: [
        { provide: CHAT_DELIVERY_OPTIONS, useValue: options },
        { provide: HostResolver, useValue: resolver },
      ],
    });
    // Starting the app may take longer than Jest's 30 s on a loaded machine; the limit is a safety net.
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await ruled.close();
    await fallback.close();
  });
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ admin, user } = await createSessions(t));
    app = await seedApp(t, {
      name: 'My Shop',
      allowedOrigins: [ORIGIN],
      chatChannels: new Map([
        ['feedback', '#product-feedback'],
        // A webhook URL put there is not a label: it is never shown.
        ['tickets', 'https://hooks.slack.com/services/T000/B000/SECRET'],
      ]),
    });
    ruled.reset();
    fallback.reset();
    Object.assign(options, testDeliveryOptions());
  });

  const route = async (channel: string, webhookUrl = `${ruled.url}/hook/${channel}`) => {
    const res = await admin.http.post('/admin/chat-routing', { appId: app.id, channel, webhookUrl });
    expect(res.status).toBe(201);
    return res.body.data._id as string;
  };
  const sendFeedback = async (subject = 'Crash on save') => {
    const res = await t.http.post(
      `/${app.id}/feedback`,
      { type: 'bug', subject, message: 'It crashes when I save.' },
      { headers: { 'x-forwarded-for': `198.51.100.${++ip % 250}` } },
    );
    expect(res.status).toBe(201);
    return res;
  };

  describe('routing', () => {
    it('sends to the app’s rule, JSON with text, channel, appId, event and data, and records it', async () => {
      await route('feedback');
      const res = await sendFeedback();
      const [stored] = await waitForNotifications(t, 1);
      expect(stored).toMatchObject({ appId: app.id, channel: 'feedback', status: 'pending', attempts: 0 });
      await drainChat(t);

      expect(fallback.calls).toEqual([]);
      expect(ruled.calls).toHaveLength(1);
      const [call] = ruled.calls;
      expect(call.path).toBe('/hook/feedback');
      expect(call.headers['content-type']).toBe('application/json');
      expect(call.body).toEqual({
        text: 'My Shop · #product-feedback · New feedback\ntype: bug · subject: Crash on save',
        channel: 'feedback',
        appId: app.id,
        event: 'feedback.created',
        data: { feedbackId: res.body.data._id, type: 'bug', subject: 'Crash on save' },
      });
      const [delivered] = await notifications(t);
      expect(delivered).toMatchObject({
        status: 'delivered',
        destination: 'rule',
        format: 'json',
        attempts: 1,
        deliveredAt: expect.any(Date),
        expiresAt: expect.any(Date),
      });
    });

    it('falls back to CHAT_DEFAULT_WEBHOOK_URL after the rule is deleted', async () => {
      const ruleId = await route('feedback');
      await sendFeedback('First');
      await waitForNotifications(t, 1);
      await drainChat(t);
      expect((await admin.http.delete(`/admin/chat-routing/${ruleId}`)).status).toBe(200);
      await sendFeedback('Second');
      await waitForNotifications(t, 2);
      await drainChat(t);

      expect(ruled.calls.map((c) => c.body.data.subject)).toEqual(['First']);
      expect(fallback.calls.map((c) => c.body.data.subject)).toEqual(['Second']);
      expect(fallback.calls[0].path).toBe('/default-hook');
      expect((await notifications(t)).map((n) => n.destination)).toEqual(['rule', 'default']);
    });

    it('falls back while the rule is inactive, and uses it again once active', async () => {
      const ruleId = await route('feedback');
      await admin.http.patch(`/admin/chat-routing/${ruleId}`, { active: false });
      await sendFeedback('While off');
      await waitForNotifications(t, 1);
      await drainChat(t);
      await admin.http.patch(`/admin/chat-routing/${ruleId}`, { active: true });
      await sendFeedback('Back on');
      await waitForNotifications(t, 2);
      await drainChat(t);

      expect(fallback.calls.map((c) => c.body.data.subject)).toEqual(['While off']);
      expect(ruled.calls.map((c) => c.body.data.subject)).toEqual(['Back on']);
    });

    it('routes each channel by its own rule', async () => {
      await route('tickets');
      await sendFeedback();
      await user.http.post(`/${app.id}/tickets`, {
        email: 'jane@example.com',
        subject: 'Broken item',
        message: 'It arrived broken',
      });
      await waitForNotifications(t, 2);
      await drainChat(t);
      expect(ruled.calls.map((c) => c.body.channel)).toEqual(['tickets']);
      expect(fallback.calls.map((c) => c.body.channel)).toEqual(['feedback']);
      expect(ruled.calls[0].body.text).toMatch(/^My Shop · tickets · New ticket\n/);
      expect(JSON.stringify(ruled.calls[0].body)).not.toContain('SECRET');
    });

    it('sends Slack {text} to hooks.slack.com and Discord {content} to discord.com/api/webhooks', async () => {
      await route('feedback', `http://hooks.slack.com:${ruled.port}/services/T000/B000/XXXX`);
      await route('tickets', `http://discord.com:${ruled.port}/api/webhooks/123/abc`);
      await sendFeedback('<!channel> look');
      await user.http.post(`/${app.id}/tickets`, {
        email: 'jane@example.com',
        subject: 'Broken *item*',
        message: 'It arrived broken',
      });
      await waitForNotifications(t, 2);
      await drainChat(t);

      const slack = ruled.calls.find((c) => c.path.startsWith('/services/'));
      expect(slack?.headers.host).toBe(`hooks.slack.com:${ruled.port}`);
      expect(slack?.body).toEqual({
        text: 'My Shop · #product-feedback · New feedback\ntype: bug · subject: &lt;!channel&gt; look',
      });
      const discord = ruled.calls.find((c) => c.path.startsWith('/api/webhooks/'));
      expect(discord?.body).toEqual({
        content:
          'My Shop · tickets · New ticket\n' +
          'subject: Broken \\*item\\* · email: jane@example.com · priority: normal · topic: general\n' +
          '“It arrived broken”',
        allowed_mentions: { parse: [] },
      });
      expect((await notifications(t)).map((n) => n.format).sort()).toEqual(['discord', 'slack']);
    });
  });

  describe('producers', () => {
    it('announces new tickets, wants, want status changes, feedback and newsletter signups', async () => {
      for (const channel of ['tickets', 'wants', 'feedback', 'newsletter']) await route(channel);
      const ticket = await user.http.post(`/${app.id}/tickets`, {
        email: 'jane@example.com',
        subject: 'Broken item',
        message: 'It arrived\n\nbroken',
        priority: 'high',
        shopId: 'shop-7',
      });
      const key = await seedApiKey(t, app.id);
      const want = await t.http.post(
        `/${app.id}/wants`,
        { title: 'Dark mode', description: 'Please', category: 'ui' },
        { headers: { 'x-api-key': key.value } },
      );
      await user.http.patch(`/admin/${app.id}/wants/${want.body.data._id}/status`, { status: 'planned' });
      await sendFeedback();
      const joined = await t.http.post(
        '/joinlist',
        { email: 'Ada@Example.com', firstName: 'Ada', referralUrl: 'https://www.shop.test/blog' },
        { headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': '198.51.100.77' } },
      );
      expect(joined.status).toBe(200);
      await waitForNotifications(t, 5);
      await drainChat(t);

      const byEvent = Object.fromEntries(ruled.calls.map((c) => [c.body.event, c.body]));
      expect(Object.keys(byEvent).sort()).toEqual([
        'feedback.created',
        'newsletter.signup',
        'ticket.created',
        'want.created',
        'want.status_changed',
      ]);
      expect(byEvent['ticket.created']).toMatchObject({
        channel: 'tickets',
        text:
          'My Shop · tickets · New ticket\n' +
          'subject: Broken item · email: jane@example.com · priority: high · topic: general · shop: shop-7\n' +
          '“It arrived broken”',
        data: { ticketId: ticket.body.data._id, email: 'jane@example.com' },
      });
      expect(byEvent['want.created']).toMatchObject({
        channel: 'wants',
        text: 'My Shop · wants · New want\ntitle: Dark mode · category: ui',
      });
      expect(byEvent['want.status_changed']).toMatchObject({
        channel: 'wants',
        text: 'My Shop · wants · Want status changed\ntitle: Dark mode · from: open · to: planned',
      });
      expect(byEvent['newsletter.signup']).toMatchObject({
        channel: 'newsletter',
        text:
          'My Shop · newsletter · New newsletter signup\n' +
          'email: ada@example.com · first name: Ada · source: joinlist · referral url: https://www.shop.test/blog',
      });
    });

    it('takes notifications from other modules through ChatNotifier.notify (hard bounces → email)', async () => {
      await route('email');
      t.app.get(ChatNotifier).notify({
        appId: app.id,
        channel: 'email',
        event: 'email.bounced',
        summary: 'Hard bounce',
        data: { email: 'gone@example.com', reason: '550 5.1.1 user unknown', messageId: 'abc' },
      });
      await waitForNotifications(t, 1);
      await drainChat(t);
      expect(ruled.calls[0].body).toMatchObject({
        channel: 'email',
        event: 'email.bounced',
        text: 'My Shop · email · Hard bounce\nemail: gone@example.com · reason: 550 5.1.1 user unknown',
      });
    });

    it('sends a daily digest per app with activity, once per period whatever the number of processes', async () => {
      await route('digest');
      const quiet = await seedApp(t);
      for (const subject of ['One', 'Two']) await sendFeedback(subject);
      await user.http.post(`/${app.id}/tickets`, { email: 'j@example.com', subject: 'S', message: 'M' });
      await waitForNotifications(t, 3);
      // Older than the 24 hours: not counted.
      await chatOutbox(t).collection.updateOne(
        { event: 'ticket.created' },
        { $set: { createdAt: new Date(Date.now() - 25 * 3_600_000) } },
      );
      await sendFeedback('Three');
      await waitForNotifications(t, 4);

      const digest = t.app.get(ChatDigest);
      const now = new Date(Date.now() + 60_000);
      expect(await digest.run(now)).toBe(1);
      expect(await digest.run(now)).toBe(0);
      await drainChat(t);

      const digests = ruled.calls.filter((c) => c.body.channel === 'digest');
      expect(digests).toHaveLength(1);
      expect(digests[0].body).toMatchObject({
        appId: app.id,
        event: 'digest.daily',
        text: 'My Shop · digest · Daily digest of the last 24 hours\ntickets: 0 · wants: 0 · feedback: 3 · signups: 0',
        data: { tickets: 0, wants: 0, feedback: 3, signups: 0 },
      });
      expect(await notifications(t, { appId: quiet.id })).toEqual([]);
    });
  });

  describe('delivery', () => {
    it('retries after a 500 and records each attempt', async () => {
      options.backoff = RETRY_WAIT_MS;
      await route('feedback');
      ruled.answer = (_call, index) => ({ status: index === 0 ? 500 : 200 });
      await sendFeedback();
      await waitForNotifications(t, 1);
      const attempted = Date.now();
      const first = await t.app.get(ChatDeliveryWorker).processDue();
      expect(first).toMatchObject({ failed: 1, delivered: 0 });
      const [failed] = await notifications(t);
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastError: 'The webhook answered 500',
        destination: 'rule',
      });
      // Between half and all of the wait (equal jitter), counted from the attempt.
      expect(failed.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(attempted + RETRY_WAIT_MS.baseMs / 2);
      expect(failed.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now() + RETRY_WAIT_MS.baseMs);
      await makeRetriesDue(t);
      await drainChat(t);
      expect(ruled.calls.map((c) => c.status)).toEqual([500, 200]);
      expect((await notifications(t))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('gives up after the last attempt, and at once on a 4xx refusal', async () => {
      await route('feedback');
      ruled.answer = () => ({ status: 503 });
      await sendFeedback();
      await waitForNotifications(t, 1);
      await drainChat(t);
      expect(ruled.calls).toHaveLength(options.maxAttempts);
      expect((await notifications(t))[0]).toMatchObject({
        status: 'dead',
        attempts: options.maxAttempts,
        lastError: 'The webhook answered 503',
      });

      ruled.reset();
      ruled.answer = () => ({ status: 404 });
      await sendFeedback('Gone');
      await waitForNotifications(t, 2);
      await drainChat(t);
      expect(ruled.calls).toHaveLength(1);
      expect((await notifications(t))[1]).toMatchObject({ status: 'dead', attempts: 1 });
    });

    it('cuts a receiver that never answers at the timeout and tries again', async () => {
      options.timeoutMs = 300;
      options.backoff = RETRY_WAIT_MS;
      await route('feedback');
      ruled.answer = (_call, index) => (index === 0 ? 'hang' : { status: 200 });
      await sendFeedback();
      await waitForNotifications(t, 1);
      // The run ends although the receiver never answers: the timeout cut the call.
      await t.app.get(ChatDeliveryWorker).processDue();
      expect((await notifications(t))[0]).toMatchObject({
        status: 'failed',
        lastError: 'No answer within 300 ms',
      });
      // The retry is answered at once, but on a busy machine not always within 300 ms: the usual limit.
      options.timeoutMs = testDeliveryOptions().timeoutMs;
      await makeRetriesDue(t);
      await drainChat(t);
      expect(ruled.calls).toHaveLength(2);
      expect((await notifications(t))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('answers the request that caused a notification without waiting for its delivery', async () => {
      await route('feedback');
      // The receiver answers only when the test opens the gate: a request that waited for a delivery
      // would never be answered, whatever the machine's speed.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      ruled.answer = () => ({ status: 200, after: gate });
      await sendFeedback('First');
      // Answered, and nothing sent yet: the delivery is not part of the request.
      expect(ruled.calls).toEqual([]);
      await waitForNotifications(t, 1);

      const delivering = t.app.get(ChatDeliveryWorker).processDue();
      await ruled.waitForCalls(1);
      await sendFeedback('While a delivery is in flight');
      expect(ruled.calls.map((c) => c.status)).toEqual([undefined]);
      open();
      await delivering;
      await drainChat(t);
      expect(ruled.calls.map((c) => c.status)).toEqual([200, 200]);
    });

    it('delivers each notification once when several workers run at once', async () => {
      await route('feedback');
      for (let i = 0; i < 12; i += 1) await sendFeedback(`Feedback ${i}`);
      await waitForNotifications(t, 12);
      const worker = t.app.get(ChatDeliveryWorker);
      // A second worker instance over the same outbox, as another process would be.
      const other = Object.create(worker, { runs: { value: new Map() } }) as ChatDeliveryWorker;
      const runs = await Promise.all([worker.processDue(), other.processDue()]);
      expect(runs[0].delivered + runs[1].delivered).toBe(12);
      expect(ruled.calls.map((c) => c.body.data.subject).sort()).toEqual(
        Array.from({ length: 12 }, (_, i) => `Feedback ${i}`).sort(),
      );
    });
  });

  it('scrubs a person’s address from stored notifications (GDPR erasure)', async () => {
    await route('newsletter');
    await route('tickets');
    const join = (email: string, ipLast: number) =>
      t.http.post(
        '/joinlist',
        { email, firstName: 'Ada', referralUrl: 'https://www.shop.test/blog' },
        {
          headers: { 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': `198.51.100.${ipLast}` },
        },
      );
    await join('ada@example.com', 91);
    await join('bob@example.com', 92);
    await user.http.post(`/${app.id}/tickets`, {
      email: 'ADA@example.com',
      subject: 'Write to ada@example.com please',
      message: 'Thanks',
    });
    await waitForNotifications(t, 3);

    const scrubbed = await t.app.get(ChatNotifier).scrubAddress('Ada@Example.com', 'erased@invalid');
    expect(scrubbed).toBe(2);
    expect(await notifications(t, { email: 'ada@example.com' })).toEqual([]);
    await drainChat(t);

    const bodies = ruled.calls.map((c) => JSON.stringify(c.body));
    expect(bodies.filter((b) => /ada@example\.com/i.test(b))).toEqual([]);
    const signup = ruled.calls.find(
      (c) => c.body.event === 'newsletter.signup' && c.body.data.email !== 'bob@example.com',
    );
    expect(signup?.body.data).toMatchObject({ email: 'erased@invalid', firstName: null, referralUrl: null });
    const ticket = ruled.calls.find((c) => c.body.event === 'ticket.created');
    expect(ticket?.body.data).toMatchObject({
      email: 'erased@invalid',
      subject: 'Write to erased@invalid please',
    });
    // Someone else's notification keeps its data.
    const bob = ruled.calls.find((c) => c.body.data.email === 'bob@example.com');
    expect(bob?.body.data).toMatchObject({ firstName: 'Ada', referralUrl: 'https://www.shop.test/blog' });
  });
});
