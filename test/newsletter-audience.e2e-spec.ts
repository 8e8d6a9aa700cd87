import { getModelToken } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { EmailEvent } from '../src/email/tracking/schemas/email-event.schema';
import { CampaignProgress } from '../src/newsletter/campaigns/campaign-progress';
import { CampaignScheduler } from '../src/newsletter/campaigns/campaign-scheduler';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp, subscriberDocument } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { useMailApp } from './helpers/mail-app';
import { TestSmtpServer } from './helpers/smtp';

const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 10,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 100, maxMs: 2_000 },
};
const DAY = 86_400_000;
const HTML = '<p>Hello {{firstName}}</p><p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const pathOf = (url: string) => new URL(url).pathname;

/**
 * Segments, topics and the preference page, scheduled campaigns in one process (docs/api/newsletters.md):
 * the scheduler's tick is called directly, as the worker-enabled process's interval would.
 */
describe('Newsletter audience: segments, topics, preferences, schedules', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let contacts: Model<Contact>;
  let events: Model<EmailEvent>;
  let admin: Session;
  let appId: string;

  const mailApp = useMailApp({
    env: { MAIL_FROM: 'News <news@mail.example.com>' },
    overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }],
  });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    events = t.app.get<Model<EmailEvent>>(getModelToken(EmailEvent.name));
  });
  beforeEach(async () => {
    ({ admin } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const campaigns = () => `/admin/${appId}/newsletter/campaigns`;
  const segments = () => `/admin/${appId}/segments`;
  const putTopics = (topics: { key: string; name: string }[]) =>
    admin.http.put(`/admin/${appId}/newsletter/topics`, { topics });
  const recipients = () => smtp.received.flatMap((mail) => mail.to).sort();

  /** One subscriber as stored, with subscription fields to vary. */
  async function person(
    email: string,
    sub: Record<string, unknown> = {},
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const doc = subscriberDocument(appId, email, email.split('@')[0]);
    Object.assign(doc.subscriptions[0], sub);
    Object.assign(doc, extra);
    await contacts.collection.insertOne(doc);
    return String(doc._id);
  }
  const event = (contactId: string, type: string, ageDays: number, automated = false) => ({
    _id: new Types.ObjectId(),
    appId,
    contactId,
    messageId: `campaign:c:${contactId}`,
    campaignId: 'c',
    provider: 'tracking',
    type,
    userAgent: null,
    automated,
    createdAt: new Date(Date.now() - ageDays * DAY),
  });
  async function membersOf(filter: Record<string, unknown>): Promise<string[]> {
    const created = await admin.http.post(segments(), { name: 'S', filter });
    expect(created.status).toBe(201);
    const preview = await admin.http.get(`${segments()}/${created.body.data._id}/preview`, {
      query: { limit: '100' },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.data.count).toBe(preview.body.data.people.length);
    expect(preview.body.data.countCapped).toBe(false);
    return (preview.body.data.people as { email: string }[]).map((p) => p.email).sort();
  }
  async function sendNow(body: Record<string, unknown>): Promise<string> {
    const created = await admin.http.post(campaigns(), {
      name: 'C',
      subject: 'Hi',
      htmlContent: HTML,
      ...body,
    });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    expect((await admin.http.post(`${campaigns()}/${id}/send`)).status).toBe(200);
    await drainEmailQueue(t);
    await t.app.get(CampaignProgress).flush();
    return id;
  }

  describe('segments', () => {
    it('selects members by each filter', async () => {
      const jan = new Date('2026-01-15T00:00:00Z');
      const jun = new Date('2026-06-15T00:00:00Z');
      const a = await person('a@example.com', { source: 'joinlist', subscribedAt: jan }, { locale: 'fr' });
      const b = await person('b@example.com', { source: 'import', subscribedAt: jun }, { locale: 'de' });
      const c = await person('c@example.com', { droppedTopics: ['offers'], subscribedAt: jun });
      await person('d@example.com', { status: 'unsubscribed', unsubscribedAt: jun });
      await putTopics([
        { key: 'offers', name: 'Offers' },
        { key: 'product-news', name: 'Product news' },
      ]);
      await events.collection.insertMany([
        event(a, 'opened', 2),
        event(b, 'opened', 40),
        event(b, 'clicked', 3),
        event(c, 'opened', 1, true), // a mail-privacy proxy, not a person
      ]);

      const all = ['a@example.com', 'b@example.com', 'c@example.com'];
      expect(await membersOf({})).toEqual(all);
      expect(await membersOf({ status: 'unsubscribed' })).toEqual(['d@example.com']);
      expect(await membersOf({ source: 'joinlist' })).toEqual(['a@example.com']);
      expect(await membersOf({ locale: 'de' })).toEqual(['b@example.com']);
      expect(await membersOf({ subscribedBefore: '2026-03-01T00:00:00Z' })).toEqual(['a@example.com']);
      expect(await membersOf({ subscribedAfter: '2026-03-01T00:00:00Z' })).toEqual([
        'b@example.com',
        'c@example.com',
      ]);
      expect(await membersOf({ keepsTopics: ['offers'] })).toEqual(['a@example.com', 'b@example.com']);
      expect(await membersOf({ openedWithinDays: 7 })).toEqual(['a@example.com']);
      expect(await membersOf({ openedWithinDays: 60 })).toEqual(['a@example.com', 'b@example.com']);
      expect(await membersOf({ clickedWithinDays: 7 })).toEqual(['b@example.com']);
      expect(await membersOf({ neverOpened: true })).toEqual(['c@example.com']);
      expect(await membersOf({ source: 'import', clickedWithinDays: 7, locale: 'de' })).toEqual([
        'b@example.com',
      ]);
    });

    it('lists, reads, edits and deletes; refuses bad filters with 400 naming the field', async () => {
      const created = await admin.http.post(segments(), { name: 'French', filter: { locale: 'fr' } });
      const id = created.body.data._id as string;
      expect(created.body.data).toMatchObject({ appId, name: 'French', filter: { locale: 'fr' } });
      expect((await admin.http.get(segments())).body.data).toHaveLength(1);
      const patched = await admin.http.patch(`${segments()}/${id}`, { filter: { locale: 'de' } });
      expect(patched.body.data.filter).toEqual({ locale: 'de' });

      const bad = async (filter: unknown, field: string) => {
        const res = await admin.http.post(segments(), { name: 'x', filter });
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.error)).toContain(field);
      };
      await bad({ locale: 'xx' }, 'locale');
      await bad({ openedWithinDays: 0 }, 'openedWithinDays');
      await bad({ subscribedBefore: 'yesterday' }, 'subscribedBefore');
      await bad({ keepsTopics: ['no-such-topic'] }, 'keepsTopics');
      await bad({ neverOpened: true, openedWithinDays: 3 }, 'neverOpened');
      await bad({ unknownField: 1 }, 'unknownField');
      await bad(undefined, 'filter is required');

      const campaign = await admin.http.post(campaigns(), {
        name: 'C',
        subject: 'S',
        htmlContent: HTML,
        segmentId: id,
      });
      expect(campaign.body.data.segmentId).toBe(id);
      expect((await admin.http.delete(`${segments()}/${id}`)).status).toBe(409);
      await admin.http.delete(`${campaigns()}/${campaign.body.data._id}`);
      expect((await admin.http.delete(`${segments()}/${id}`)).status).toBe(200);
      expect((await admin.http.get(`${segments()}/${id}`)).status).toBe(404);
      const unknown = await admin.http.post(campaigns(), {
        name: 'C',
        subject: 'S',
        htmlContent: HTML,
        segmentId: id,
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toContain('segmentId');
    });

    it('sends a campaign to the segment’s members only', async () => {
      await person('fr@example.com', {}, { locale: 'fr' });
      await person('de@example.com', {}, { locale: 'de' });
      const segment = await admin.http.post(segments(), { name: 'French', filter: { locale: 'fr' } });
      await sendNow({ segmentId: segment.body.data._id });
      expect(recipients()).toEqual(['fr@example.com']);
    });
  });

  describe('topics and the preference page', () => {
    const TOPICS = [
      { key: 'offers', name: 'Offers <b>& deals</b>' },
      { key: 'product-news', name: 'Product news' },
    ];

    it('validates the topic list and a campaign’s topic (400 naming the field)', async () => {
      expect((await putTopics([{ key: 'Bad Key', name: 'x' }])).body.error).toContain('key');
      expect((await putTopics([TOPICS[0], TOPICS[0]])).status).toBe(400);
      expect((await putTopics(TOPICS)).body.data.topics).toEqual(TOPICS);
      const res = await admin.http.post(campaigns(), {
        name: 'C',
        subject: 'S',
        htmlContent: HTML,
        topic: 'nope',
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('topic');
    });

    it('keeps and drops topics from the mail’s link; a campaign of a dropped topic skips them', async () => {
      await putTopics(TOPICS);
      const ada = await person('ada@example.com');
      await person('bob@example.com');
      await sendNow({ topic: 'product-news' });
      const mail = smtp.received.find((m) => m.to.includes('ada@example.com'))!;
      const link = pathOf(/^<(.+)>$/.exec(mail.headers['list-unsubscribe'])![1]);

      const page = await t.http.get(link);
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.text).toContain('Offers &lt;b&gt;&amp; deals&lt;/b&gt;');
      expect(page.text).not.toContain('<b>');
      expect(page.text).toMatch(/name="topic" value="offers" checked/);

      // A form without the page's token changes nothing (a forged cross-site POST).
      const forged = await t.http.post(link, undefined, {
        payload: 'action=save&topic=product-news&csrf=forged',
        headers: FORM,
      });
      expect(forged.text).toContain('Nothing was changed');
      const token = link.split('/').pop()!;
      const saved = await t.http.post(link, undefined, {
        payload: `action=save&topic=product-news&csrf=${encodeURIComponent(token)}`,
        headers: FORM,
      });
      expect(saved.text).toContain('Your choices are saved');
      const after = await contacts.findById(ada).lean<Contact>().orFail().exec();
      expect(after.subscriptions[0]).toMatchObject({ status: 'active', droppedTopics: ['offers'] });
      expect(after.consentHistory.at(-1)).toMatchObject({
        category: 'blog',
        topic: 'offers',
        status: false,
        source: 'preferences',
        actor: 'self',
        appId,
      });
      expect((await t.http.get(link)).text).not.toMatch(/value="offers" checked/);

      smtp.received.length = 0;
      await sendNow({ topic: 'offers' });
      expect(recipients()).toEqual(['bob@example.com']);
      smtp.received.length = 0;
      await sendNow({ topic: 'product-news' });
      expect(recipients()).toEqual(['ada@example.com', 'bob@example.com']);
    });

    it('one-click unsubscribes from the campaign’s topic only (RFC 8058)', async () => {
      await putTopics(TOPICS);
      const bob = await person('bob@example.com');
      await sendNow({ topic: 'offers' });
      const url = /^<(.+)>$/.exec(smtp.received[0].headers['list-unsubscribe'])![1];
      const res = await t.http.post(pathOf(url), undefined, {
        payload: 'List-Unsubscribe=One-Click',
        headers: FORM,
      });
      expect(res.status).toBe(200);
      const after = await contacts.findById(bob).lean<Contact>().orFail().exec();
      expect(after.subscriptions[0]).toMatchObject({ status: 'active', droppedTopics: ['offers'] });
      expect(after.consentHistory.at(-1)).toMatchObject({ topic: 'offers', source: 'unsubscribe.one-click' });

      const token = pathOf(url).split('/').pop()!;
      const left = await t.http.post(pathOf(url), undefined, {
        payload: `action=leave&csrf=${encodeURIComponent(token)}`,
        headers: FORM,
      });
      expect(left.text).toContain('You are unsubscribed');
      const gone = await contacts.findById(bob).lean<Contact>().orFail().exec();
      expect(gone.subscriptions[0].status).toBe('unsubscribed');
    });
  });

  describe('scheduled sends', () => {
    const create = async () =>
      (await admin.http.post(campaigns(), { name: 'C', subject: 'Hi', htmlContent: HTML })).body.data
        ._id as string;

    it('schedules, refuses edits while scheduled, unschedules; validates sendAt', async () => {
      const id = await create();
      const bad = async (sendAt: unknown, message: string) => {
        const res = await admin.http.post(`${campaigns()}/${id}/schedule`, { sendAt });
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.error)).toContain(message);
      };
      await bad('tomorrow', 'sendAt');
      await bad(new Date(Date.now() - 60_000).toISOString(), 'sendAt must be in the future');
      await bad(new Date(Date.now() + 400 * DAY).toISOString(), 'sendAt must be at most a year ahead');

      const sendAt = new Date(Date.now() + DAY).toISOString();
      const scheduled = await admin.http.post(`${campaigns()}/${id}/schedule`, { sendAt });
      expect(scheduled.status).toBe(200);
      expect(scheduled.body.data).toMatchObject({ status: 'scheduled', scheduledFor: sendAt });
      expect((await admin.http.patch(`${campaigns()}/${id}`, { name: 'x' })).status).toBe(409);
      expect((await admin.http.delete(`${campaigns()}/${id}`)).status).toBe(409);
      expect((await admin.http.post(`${campaigns()}/${id}/send`)).status).toBe(409);
      expect((await admin.http.post(`${campaigns()}/${id}/schedule`, { sendAt })).status).toBe(409);

      const back = await admin.http.post(`${campaigns()}/${id}/unschedule`);
      expect(back.body.data).toMatchObject({ status: 'draft', scheduledFor: null });
      expect((await admin.http.post(`${campaigns()}/${id}/unschedule`)).status).toBe(409);
      expect((await admin.http.patch(`${campaigns()}/${id}`, { name: 'x' })).status).toBe(200);
    });

    it('starts a due campaign once, however many ticks run', async () => {
      await person('ada@example.com');
      const id = await create();
      const sendAt = new Date(Date.now() + DAY);
      await admin.http.post(`${campaigns()}/${id}/schedule`, { sendAt: sendAt.toISOString() });
      const scheduler = t.app.get(CampaignScheduler);
      expect(await scheduler.tick(new Date())).toBe(0);
      const later = new Date(sendAt.getTime() + 1_000);
      const ticks = await Promise.all([scheduler.tick(later), scheduler.tick(later), scheduler.tick(later)]);
      expect(ticks.reduce((sum, n) => sum + n, 0)).toBe(1);
      await drainEmailQueue(t);
      await t.app.get(CampaignProgress).flush();
      expect(recipients()).toEqual(['ada@example.com']);
      expect((await admin.http.get(`${campaigns()}/${id}`)).body.data).toMatchObject({
        status: 'sent',
        scheduledFor: null,
        stats: { total: 1, sent: 1 },
      });
    });
  });
});
