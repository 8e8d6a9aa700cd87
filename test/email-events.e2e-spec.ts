import { getModelToken } from '@nestjs/mongoose';
import { randomBytes } from 'node:crypto';
import { trusted, Types, type Model } from 'mongoose';
import { Webhook } from 'standardwebhooks';
import { ChatNotification } from '../src/chat/schemas/chat-notification.schema';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { EmailService } from '../src/email/email.service';
import { EmailEventLedger } from '../src/email/events/email-event-ledger';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { EmailEvent } from '../src/email/tracking/schemas/email-event.schema';
import { TrackingEvents } from '../src/email/tracking/tracking-events';
import { DEFAULT_TRACKING_LIMITS, TRACKING_LIMITS } from '../src/email/tracking/tracking-limits';
import { TrackingLinks } from '../src/email/tracking/tracking-links';
import { Campaign } from '../src/newsletter/campaigns/schemas/campaign.schema';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { useMailApp } from './helpers/mail-app';
import { TestSmtpServer } from './helpers/smtp';
import { SAFETY_DEADLINE_MS } from './helpers/wait';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 10,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 100, maxMs: 2_000 },
};
/** A short replay window: a repeated open or click counts again after this pause (a minute in production). */
const REPLAY_WINDOW_MS = 20;
const nextWindow = () => new Promise((resolve) => setTimeout(resolve, REPLAY_WINDOW_MS + 5));
const HUMAN = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36';
const LINKS = ['https://shop.example.com/a', 'https://shop.example.com/b'];
const HTML = `<p>Hi {{firstName}}</p><a href="${LINKS[0]}">a</a> <a href="${LINKS[1]}">b</a>`;

interface SignOptions {
  secret?: string;
  id?: string;
  sentAt?: Date;
  prefix?: 'webhook' | 'svix';
}

/** A request as the provider sends it, signed with the `standardwebhooks` package. */
function signed(body: string, options: SignOptions = {}) {
  const { secret = SECRET, id = `msg_${randomBytes(8).toString('hex')}`, sentAt = new Date() } = options;
  const prefix = options.prefix ?? 'webhook';
  return {
    id,
    headers: {
      'content-type': 'application/json',
      [`${prefix}-id`]: id,
      [`${prefix}-timestamp`]: String(Math.floor(sentAt.getTime() / 1000)),
      [`${prefix}-signature`]: new Webhook(secret).sign(id, sentAt, body),
    },
  };
}

/** Chat notices are stored off the request (ChatNotifier.notify does not wait): poll for them. */
async function eventually<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  ms = SAFETY_DEADLINE_MS,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const providerEvent = (type: string, emailId: string, data: Record<string, unknown> = {}) =>
  JSON.stringify({ type, created_at: new Date().toISOString(), data: { email_id: emailId, ...data } });

describe('Provider webhooks, e-mail events and analytics', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let admin: Session;
  let user: Session;
  let viewer: Session;
  let appId: string;
  let jobs: Model<EmailJob>;
  let events: Model<EmailEvent>;
  let contacts: Model<Contact>;
  let campaigns: Model<Campaign>;
  let chat: Model<ChatNotification>;

  const mailApp = useMailApp({
    env: { MAIL_FROM: 'News <news@mail.example.com>', WEBHOOK_SECRET: SECRET },
    overrides: [
      { provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS },
      {
        provide: TRACKING_LIMITS,
        useValue: { ...DEFAULT_TRACKING_LIMITS, replayWindowMs: REPLAY_WINDOW_MS },
      },
    ],
    // The previous test's buffered events (the worker's `sent` ones, flushed once a second) land first.
    beforeReset: (app) => app.app.get(TrackingEvents).flush(),
  });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    events = t.app.get<Model<EmailEvent>>(getModelToken(EmailEvent.name));
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    campaigns = t.app.get<Model<Campaign>>(getModelToken(Campaign.name));
    chat = t.app.get<Model<ChatNotification>>(getModelToken(ChatNotification.name));
  });
  beforeEach(async () => {
    ({ admin, user, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const post = (body: string, headers: Record<string, string>) =>
    t.http.request('POST', '/email-events/primary-provider', { payload: body, headers });
  const deliver = async (body: string, options: SignOptions = {}) => {
    const request = signed(body, options);
    return post(body, request.headers);
  };
  const flushEvents = () => t.app.get(TrackingEvents).flush();

  /** Sends one transactional message through the real worker and SMTP server; returns its Message-ID. */
  async function sendOne(to = 'reader@example.com'): Promise<string> {
    const job = await t.app.get(EmailService).enqueueEmail({ to, appId, subject: 'Hi', text: 'Hello' });
    await drainEmailQueue(t);
    const stored = await jobs.findById(job.id).lean<EmailJob>().orFail().exec();
    expect(stored.messageId).toBeDefined();
    return stored.messageId!;
  }

  async function subscribe(emails: string[]): Promise<void> {
    for (const email of emails) {
      const res = await admin.http.post(`/admin/${appId}/newsletter/subscribers`, { email, firstName: 'P' });
      expect(res.status).toBe(201);
    }
  }

  /** Creates and sends a campaign to the app's subscribers; returns its id once every message is sent. */
  async function sendCampaign(name = 'November'): Promise<string> {
    const created = await admin.http.post(`/admin/${appId}/newsletter/campaigns`, {
      name,
      subject: 'News',
      htmlContent: HTML,
    });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    expect((await admin.http.post(`/admin/${appId}/newsletter/campaigns/${id}/send`)).status).toBe(200);
    await drainEmailQueue(t, { dueOnly: true });
    await flushEvents();
    return id;
  }

  const contactIdOf = async (email: string) =>
    String((await contacts.findOne({ email }).lean<Contact>().orFail().exec())._id);
  const messageIdOf = async (campaignId: string, email: string) =>
    (await jobs.findOne({ campaignId, 'payload.to': email }).lean<EmailJob>().orFail().exec()).messageId!;

  describe('POST /email-events/primary-provider: signature', () => {
    it('accepts a signed event, stores it once and answers a replay processed:false', async () => {
      const messageId = await sendOne();
      const body = providerEvent('email.delivered', messageId, { to: ['reader@example.com'] });
      const request = signed(body);
      const first = await post(body, request.headers);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ success: true, processed: true, eventId: expect.any(String) });
      const stored = await events.findById(first.body.eventId).lean<EmailEvent>().orFail().exec();
      expect(stored).toMatchObject({ type: 'delivered', provider: 'primary', messageId, appId });

      const replay = await post(body, request.headers);
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ success: true, processed: false, eventId: first.body.eventId });
      expect(await events.countDocuments({ type: 'delivered' })).toBe(1);
    });

    it('accepts the svix-* header names', async () => {
      const messageId = await sendOne();
      const res = await deliver(providerEvent('email.delivered', messageId), { prefix: 'svix' });
      expect(res.status).toBe(200);
      expect(res.body.processed).toBe(true);
    });

    it('refuses a tampered body, another secret, an old timestamp and missing headers (401)', async () => {
      const messageId = await sendOne();
      const body = providerEvent('email.delivered', messageId);
      const request = signed(body);
      const tampered = await post(body.replace('delivered', 'bounced'), request.headers);
      expect(tampered.status).toBe(401);
      expect(tampered.body).toEqual({ success: false, error: expect.stringMatching(/signature/i) });
      const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;
      expect((await deliver(body, { secret: otherSecret })).status).toBe(401);
      const old = await deliver(body, { sentAt: new Date(Date.now() - 6 * 60_000) });
      expect(old.status).toBe(401);
      expect(old.body.error).toMatch(/too old/);
      expect((await post(body, { 'content-type': 'application/json' })).status).toBe(401);
      expect(await events.countDocuments({ provider: 'primary' })).toBe(0);
    });

    it('answers processed:false, eventId:null for an unknown type or an unknown message', async () => {
      const messageId = await sendOne();
      const unknownType = await deliver(providerEvent('email.scheduled', messageId));
      expect(unknownType.body).toEqual({ success: true, processed: false, eventId: null });
      const unknownMessage = await deliver(
        providerEvent('email.delivered', `${String(new Types.ObjectId())}@x.test`),
      );
      expect(unknownMessage.body).toEqual({ success: true, processed: false, eventId: null });
      expect((await deliver(JSON.stringify([1, 2]))).body.processed).toBe(false);
      expect(await events.countDocuments({ provider: 'primary' })).toBe(0);
    });
  });

  describe('POST /email-events/cold-provider', () => {
    it('answers 200 for any JSON object and 400 for anything else, storing nothing', async () => {
      const ok = await t.http.post('/email-events/cold-provider', { type: 'x', data: { any: [1] } });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ success: true, message: expect.any(String) });
      expect((await t.http.post('/email-events/cold-provider', [1, 2])).status).toBe(400);
      const text = await t.http.request('POST', '/email-events/cold-provider', {
        payload: '"text"',
        headers: { 'content-type': 'application/json' },
      });
      expect(text.status).toBe(400);
      expect(await events.countDocuments()).toBe(0);
    });
  });

  describe('bounces and complaints protect later sends', () => {
    it('a hard bounce suppresses the address, marks the subscription bounced, tells chat, and the next campaign skips it', async () => {
      await subscribe(['bouncy@example.com', 'fine@example.com']);
      const first = await sendCampaign('First');
      expect(smtp.received.flatMap((m) => m.to).sort()).toEqual(['bouncy@example.com', 'fine@example.com']);
      const messageId = await messageIdOf(first, 'bouncy@example.com');

      const res = await deliver(
        providerEvent('email.bounced', messageId, {
          to: ['bouncy@example.com'],
          bounce: { type: 'Permanent', message: '550 no such user' },
        }),
      );
      expect(res.body.processed).toBe(true);
      expect(await t.app.get(SuppressionService).find('bouncy@example.com')).toMatchObject({
        reason: 'hard_bounce',
      });
      const person = await contacts.findOne({ email: 'bouncy@example.com' }).lean<Contact>().orFail().exec();
      expect(person.subscriptions.find((s) => s.appId === appId)?.status).toBe('bounced');
      expect(person.consentHistory.at(-1)).toMatchObject({ category: 'blog', status: false, appId });
      const notice = await eventually(
        () => chat.findOne({ event: 'email.bounced', appId }).lean().exec(),
        (found) => found !== null,
      );
      expect(notice).toMatchObject({
        channel: 'email',
        data: expect.objectContaining({ email: 'bouncy@example.com' }),
      });

      smtp.received.length = 0;
      await sendCampaign('Second');
      expect(smtp.received.flatMap((m) => m.to)).toEqual(['fine@example.com']);
    });

    it('a bounce whose suppression fails is not acknowledged: the provider’s retry suppresses, counted once', async () => {
      await subscribe(['retry@example.com']);
      const id = await sendCampaign();
      const body = providerEvent('email.bounced', await messageIdOf(id, 'retry@example.com'), {
        bounce: { type: 'Permanent' },
      });
      // The same delivery twice, as a provider retries it: same webhook id, same signature.
      const delivery = signed(body, { id: 'msg_retried_bounce' });
      const suppression = t.app.get(SuppressionService);
      const failOnce = jest
        .spyOn(suppression, 'suppress')
        .mockRejectedValueOnce(new Error('database unavailable'));
      try {
        expect((await post(body, delivery.headers)).status).toBe(500);
        expect(await suppression.find('retry@example.com')).toBeNull();
        const retry = await post(body, delivery.headers);
        expect(retry.body).toMatchObject({ success: true, processed: true });
      } finally {
        failOnce.mockRestore();
      }
      expect(await suppression.find('retry@example.com')).toMatchObject({ reason: 'hard_bounce' });
      expect(await events.countDocuments({ webhookId: 'msg_retried_bounce' })).toBe(1);
      const analytics = await viewer.http.get(`/admin/email-events/analytics/campaigns/${id}`);
      expect(analytics.body.data).toMatchObject({ bounced: 1, hardBounced: 1 });
      expect((await post(body, delivery.headers)).body).toMatchObject({ processed: false });
    });

    it('a soft bounce is recorded without suppressing; a complaint suppresses and unsubscribes', async () => {
      await subscribe(['soft@example.com', 'angry@example.com']);
      const id = await sendCampaign();
      const soft = await deliver(
        providerEvent('email.bounced', await messageIdOf(id, 'soft@example.com'), {
          bounce: { type: 'Transient' },
        }),
      );
      expect(soft.body.processed).toBe(true);
      expect(await t.app.get(SuppressionService).find('soft@example.com')).toBeNull();
      const complaint = await deliver(
        providerEvent('email.complained', await messageIdOf(id, 'angry@example.com')),
      );
      expect(complaint.body.processed).toBe(true);
      expect(await t.app.get(SuppressionService).find('angry@example.com')).toMatchObject({
        reason: 'complaint',
      });
      const angry = await contacts.findOne({ email: 'angry@example.com' }).lean<Contact>().orFail().exec();
      expect(angry.subscriptions.find((s) => s.appId === appId)?.status).toBe('unsubscribed');
      const complaints = () => chat.countDocuments({ event: 'email.complained' }).exec();
      expect(await eventually(complaints, (n) => n > 0)).toBe(1);
      const analytics = await viewer.http.get(`/admin/email-events/analytics/campaigns/${id}`);
      expect(analytics.body.data).toMatchObject({
        bounced: 1,
        hardBounced: 0,
        complained: 1,
        unsubscribed: 1,
      });
    });
  });

  describe('analytics against a known set of events', () => {
    it('counts sent, delivered, human and automated opens, clicks, top links, timeline, rates', async () => {
      const people = ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com'];
      await subscribe(people);
      const id = await sendCampaign();
      const ids = Object.fromEntries(await Promise.all(people.map(async (p) => [p, await contactIdOf(p)])));
      const links = t.app.get(TrackingLinks);
      const path = (url: string) => new URL(url).pathname;
      const open = (email: string, agent: string) =>
        t.http.get(path(links.openUrl({ campaignId: id, contactId: ids[email], appId })), {
          headers: { 'user-agent': agent },
        });
      const click = (email: string, linkIndex: number, agent = HUMAN) =>
        t.http.get(path(links.clickUrl({ campaignId: id, contactId: ids[email], appId, linkIndex })), {
          headers: { 'user-agent': agent },
        });

      // Delivered: a, b, c (3). Human opens: a twice, b once (3 opens, 2 people). Automated opens: c (Apple
      // privacy proxy) and d (Google image proxy): not opens. Clicks: a on link 0 twice, b on link 1 once
      // (3 clicks, 2 people); one scanner click on link 1, not counted.
      for (const email of people.slice(0, 3)) {
        const res = await deliver(providerEvent('email.delivered', await messageIdOf(id, email)));
        expect(res.body.processed).toBe(true);
      }
      await open('a@example.com', HUMAN);
      await nextWindow();
      await open('a@example.com', HUMAN);
      await open('b@example.com', HUMAN);
      await open('c@example.com', 'Mozilla/5.0');
      await open('d@example.com', 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)');
      expect((await click('a@example.com', 0)).status).toBe(302);
      await nextWindow();
      await click('a@example.com', 0);
      await click('b@example.com', 1);
      await click('c@example.com', 1, 'Mozilla/5.0 Barracuda link scanner');
      await flushEvents();

      const analytics = await viewer.http.get(`/admin/email-events/analytics/campaigns/${id}`);
      expect(analytics.status).toBe(200);
      const today = new Date().toISOString().slice(0, 10);
      expect(analytics.body.data).toMatchObject({
        campaignId: id,
        sent: 4,
        delivered: 3,
        opened: 3,
        uniqueOpens: 2,
        clicked: 3,
        uniqueClicks: 2,
        bounced: 0,
        complained: 0,
        unsubscribed: 0,
        automatedOpens: 2,
        automatedClicks: 1,
        openRate: 0.6667,
        clickThroughRate: 0.6667,
        topLinks: [
          { url: LINKS[0], clicks: 2 },
          { url: LINKS[1], clicks: 1 },
        ],
      });
      expect(analytics.body.data.timeline).toEqual(
        expect.arrayContaining([
          { date: today, type: 'sent', count: 4 },
          { date: today, type: 'delivered', count: 3 },
          { date: today, type: 'opened', count: 3 },
          { date: today, type: 'clicked', count: 3 },
          { date: today, type: 'automatedOpened', count: 2 },
        ]),
      );

      const stats = await viewer.http.get(`/admin/email-events/campaign/${id}/stats`);
      expect(stats.body.data).toEqual({
        sent: 4,
        delivered: 3,
        opened: 3,
        clicked: 3,
        bounced: 0,
        openRate: 0.6667,
        clickRate: 0.6667,
      });

      const recipients = await viewer.http.get(`/admin/email-events/analytics/campaigns/${id}/recipients`, {
        query: { limit: 3 },
      });
      expect(recipients.body.pagination).toMatchObject({
        page: 1,
        limit: 3,
        total: 4,
        pages: 2,
        totalCapped: false,
      });
      const page2 = await viewer.http.get(`/admin/email-events/analytics/campaigns/${id}/recipients`, {
        query: { limit: 3, page: 2 },
      });
      const all = [...recipients.body.data, ...page2.body.data];
      expect(all.map((r: { contactId: string }) => r.contactId).sort()).toEqual(Object.values(ids).sort());
      const a = all.find((r: { contactId: string }) => r.contactId === ids['a@example.com']);
      expect(a.events).toEqual(['sent', 'delivered', 'opened', 'clicked']);
      expect(a.lastEvent).toBe('clicked');

      const person = await viewer.http.get(`/admin/email-events/analytics/contacts/${ids['a@example.com']}`, {
        query: { limit: 2 },
      });
      expect(person.body.data).toMatchObject({
        contactId: ids['a@example.com'],
        totalSent: 1,
        totalOpened: 2,
        totalClicked: 2,
        totalBounced: 0,
        totalComplained: 0,
      });
      expect(person.body.data.events).toHaveLength(2);
      expect(person.body.data.events[0].type).toBe('clicked');
      expect(person.body.pagination).toMatchObject({
        page: 1,
        limit: 2,
        total: 6,
        pages: 3,
        totalCapped: false,
      });
      const d = await viewer.http.get(`/admin/email-events/analytics/contacts/${ids['d@example.com']}`);
      expect(d.body.data).toMatchObject({ totalOpened: 0, totalAutomatedOpens: 1 });

      const overview = await viewer.http.get('/admin/email-events/analytics/overview', {
        query: { from: today, to: today },
      });
      expect(overview.body.data).toMatchObject({
        from: today,
        to: today,
        totalSent: 4,
        totalDelivered: 3,
        totalOpened: 3,
        totalUniqueOpens: 2,
        totalClicked: 3,
        totalUniqueClicks: 2,
        totalAutomatedOpens: 2,
        openRate: 0.6667,
        bounceRate: 0,
        complaintRate: 0,
        timeline: [{ date: today, sent: 4, delivered: 3, opened: 3, clicked: 3 }],
      });
      const oneApp = await viewer.http.get('/admin/email-events/analytics/overview', { query: { appId } });
      expect(oneApp.body.data.totalSent).toBe(4);
      const otherApp = await viewer.http.get('/admin/email-events/analytics/overview', {
        query: { appId: 'other-app' },
      });
      expect(otherApp.body.data.totalSent).toBe(0);
    });

    it('does not count a replayed webhook or a retried tracking batch twice', async () => {
      await subscribe(['a@example.com']);
      const id = await sendCampaign();
      const body = providerEvent('email.delivered', await messageIdOf(id, 'a@example.com'));
      const request = signed(body);
      await post(body, request.headers);
      await post(body, request.headers);
      // The provider's own `email.sent` is listed, not counted on top of the worker's `sent`.
      const providerSent = await deliver(providerEvent('email.sent', await messageIdOf(id, 'a@example.com')));
      expect(providerSent.body.processed).toBe(true);
      const contactId = await contactIdOf('a@example.com');
      const event = {
        _id: new Types.ObjectId(),
        appId,
        contactId,
        messageId: `campaign:${id}:${contactId}`,
        campaignId: id,
        provider: 'tracking',
        type: 'opened' as const,
        userAgent: HUMAN,
        automated: false,
        createdAt: new Date(),
      };
      const ledger = t.app.get(EmailEventLedger);
      expect(await ledger.append([event])).toHaveLength(1);
      expect(await ledger.append([event])).toHaveLength(0);
      const figures = (await viewer.http.get(`/admin/email-events/analytics/campaigns/${id}`)).body.data;
      expect(figures).toMatchObject({ sent: 1, delivered: 1, opened: 1, uniqueOpens: 1 });
    });
  });

  describe('event lists', () => {
    it('filters by every field of the spec, lists a message’s events and refuses bad filters', async () => {
      await subscribe(['a@example.com', 'b@example.com']);
      const id = await sendCampaign();
      const messageId = await messageIdOf(id, 'a@example.com');
      await deliver(providerEvent('email.delivered', messageId));
      const contactId = await contactIdOf('a@example.com');
      const list = (query: Record<string, string>) =>
        viewer.http.get('/admin/email-events', { query }).then((res) => res.body);

      expect((await list({})).pagination.total).toBe(3);
      expect((await list({ campaignId: id })).pagination.total).toBe(3);
      expect((await list({ contactId })).pagination.total).toBe(2);
      expect((await list({ messageId })).data.map((e: { type: string }) => e.type).sort()).toEqual([
        'delivered',
        'sent',
      ]);
      expect((await list({ type: 'sent' })).pagination.total).toBe(2);
      expect((await list({ provider: 'primary' })).pagination.total).toBe(1);
      expect((await list({ appId })).pagination.total).toBe(3);
      expect((await list({ appId: 'other-app' })).pagination.total).toBe(0);
      expect((await list({ type: 'sent', contactId })).data).toEqual([
        expect.objectContaining({ type: 'sent', contactId, campaignId: id, messageId, appId }),
      ]);
      const badFilters: Record<string, string>[] = [
        { type: 'nope' },
        { contactId: 'x' },
        { messageId: 'a b' },
        { limit: '0' },
      ];
      for (const bad of badFilters) {
        const res = await viewer.http.get('/admin/email-events', { query: bad });
        expect(res.status).toBe(400);
        expect(res.body.error).toMatch(new RegExp(Object.keys(bad)[0]));
      }

      const byMessage = await viewer.http.get(`/admin/email-events/message/${encodeURIComponent(messageId)}`);
      expect(byMessage.status).toBe(200);
      expect(byMessage.body.data.map((e: { type: string }) => e.type)).toEqual(['sent', 'delivered']);
      expect(
        (await viewer.http.get(`/admin/email-events/message/${String(new Types.ObjectId())}@x.test`)).status,
      ).toBe(404);
      expect((await t.http.get('/admin/email-events')).status).toBe(401);
      expect((await viewer.http.get('/admin/email-events/analytics/contacts/not-an-id')).status).toBe(404);
      const range = await viewer.http.get('/admin/email-events/analytics/overview', {
        query: { from: '2026-01-02', to: '2026-01-01' },
      });
      expect(range.status).toBe(400);
    });
  });

  describe('streams in events and analytics', () => {
    it('records each event with its message’s stream and splits the figures by stream', async () => {
      await subscribe(['a@example.com']);
      await sendCampaign();
      const signIn = await sendOne('reader@example.com');
      // Broadcast by its job although it has no campaign (a batch send): the job's stream decides.
      const batch = await t.app
        .get(EmailService)
        .enqueueEmail({ to: 'b@example.com', appId, subject: 'Hi', text: 'Hello' }, { stream: 'broadcast' });
      await drainEmailQueue(t);
      const batchMessageId = (await jobs.findById(batch.id).lean<EmailJob>().orFail().exec()).messageId!;
      expect((await deliver(providerEvent('email.delivered', signIn))).status).toBe(200);
      expect((await deliver(providerEvent('email.delivered', batchMessageId))).status).toBe(200);
      await flushEvents();

      const overview = (query: Record<string, string>) =>
        viewer.http.get('/admin/email-events/analytics/overview', { query });
      const all = await overview({});
      expect(all.body.data).toMatchObject({
        stream: null,
        totalSent: 3,
        totalDelivered: 2,
        byStream: {
          transactional: { sent: 1, delivered: 1, bounced: 0 },
          broadcast: { sent: 2, delivered: 1, bounced: 0 },
        },
      });
      const transactional = await overview({ stream: 'transactional', appId });
      expect(transactional.body.data).toMatchObject({
        stream: 'transactional',
        totalSent: 1,
        totalDelivered: 1,
      });
      expect(transactional.body.data.timeline).toEqual([expect.objectContaining({ sent: 1, delivered: 1 })]);
      const bogus = await overview({ stream: 'newsletter' });
      expect(bogus.status).toBe(400);
      expect(bogus.body).toEqual({ success: false, error: expect.stringMatching(/\bstream\b/) });

      const list = (query: Record<string, string>) => viewer.http.get('/admin/email-events', { query });
      const signInEvents = await list({ stream: 'transactional' });
      expect(signInEvents.status).toBe(200);
      expect(signInEvents.body.data.map((e: { messageId: string }) => e.messageId)).toEqual([signIn, signIn]);
      expect(signInEvents.body.data.map((e: { stream: string }) => e.stream)).toEqual([
        'transactional',
        'transactional',
      ]);
      const broadcast = await list({ stream: 'broadcast', appId });
      expect(broadcast.body.pagination.total).toBe(3);
      expect(broadcast.body.data.every((e: { stream: string }) => e.stream === 'broadcast')).toBe(true);
      const onePerson = await list({ stream: 'broadcast', contactId: await contactIdOf('a@example.com') });
      expect(onePerson.body.data.map((e: { type: string }) => e.type)).toEqual(['sent']);
      const refusals: Record<string, string>[] = [
        { stream: 'broadcast', campaignId: 'spring' },
        { stream: 'all' },
      ];
      for (const query of refusals) {
        const refused = await list(query);
        expect(refused.status).toBe(400);
        expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/\bstream\b/) });
      }
    });
  });

  describe('complaint guard', () => {
    it('holds the rest of a campaign above 0.1% complaints after 1,000 deliveries, and an admin resumes it', async () => {
      const people = Array.from({ length: 5 }, (_, i) => `p${i}@example.com`);
      await subscribe(people);
      const id = await sendCampaign();
      // 1,000 deliveries of the campaign, written the way ingestion writes them.
      const ledger = t.app.get(EmailEventLedger);
      await ledger.append(
        Array.from({ length: 1_000 }, () => ({
          _id: new Types.ObjectId(),
          appId,
          contactId: String(new Types.ObjectId()),
          messageId: null,
          campaignId: id,
          provider: 'primary',
          type: 'delivered' as const,
          userAgent: null,
          automated: false,
          createdAt: new Date(),
        })),
      );
      // The campaign's remaining messages (as its plan would queue them).
      const email = t.app.get(EmailService);
      await email.enqueueEmails(
        ['later1@example.com', 'later2@example.com'].map((to) => ({
          message: { to, appId, campaignId: id, subject: 'News', text: 'x' },
        })),
      );

      // 1 complaint of 1,000 deliveries is 0.1% (COMPLAINT_GUARD_RATE_PERCENT's default): not above it.
      for (const person of people.slice(0, 1)) {
        await deliver(providerEvent('email.complained', await messageIdOf(id, person)));
      }
      expect((await campaigns.findById(id).lean<Campaign>().orFail().exec()).heldReason).toBeNull();
      // The 2nd (0.2%, below the old 0.3% rule) trips the guard.
      await deliver(providerEvent('email.complained', await messageIdOf(id, people[1])));
      const held = await admin.http.get(`/admin/${appId}/newsletter/campaigns/${id}`);
      expect(held.body.data.heldReason).toMatch(/complaint/);
      const heldNotices = () => chat.countDocuments({ event: 'email.campaign_held', appId }).exec();
      expect(await eventually(heldNotices, (n) => n > 0)).toBe(1);

      // A message queued after the hold is held too; nothing of the campaign is sent.
      await email.enqueueEmail({
        to: 'later3@example.com',
        appId,
        campaignId: id,
        subject: 'News',
        text: 'x',
      });
      smtp.received.length = 0;
      await drainEmailQueue(t, { dueOnly: true });
      expect(smtp.received).toHaveLength(0);
      expect(await jobs.countDocuments({ campaignId: id, heldAt: trusted({ $exists: true }) })).toBe(3);

      const resumeUrl = `/admin/${appId}/newsletter/campaigns/${id}/resume`;
      expect((await user.http.post(resumeUrl)).status).toBe(403);
      const resumed = await admin.http.post(resumeUrl);
      expect(resumed.status).toBe(200);
      expect(resumed.body.data).toMatchObject({ released: 3, campaign: { heldReason: null } });
      expect((await admin.http.post(resumeUrl)).status).toBe(409);
      await drainEmailQueue(t, { dueOnly: true });
      expect(smtp.received.flatMap((m) => m.to).sort()).toEqual([
        'later1@example.com',
        'later2@example.com',
        'later3@example.com',
      ]);
      // Resumed for good: another complaint does not hold it again.
      await deliver(providerEvent('email.complained', await messageIdOf(id, people[4])));
      expect((await campaigns.findById(id).lean<Campaign>().orFail().exec()).heldReason).toBeNull();
    });
  });
});
