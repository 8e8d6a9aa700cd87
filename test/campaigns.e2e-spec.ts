import { EventEmitter2 } from '@nestjs/event-emitter';
import { getModelToken } from '@nestjs/mongoose';
import { trusted, Types, type Model } from 'mongoose';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { EmailEvents } from '../src/email/email.events';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { EmailEvent } from '../src/email/tracking/schemas/email-event.schema';
import { TrackingEvents } from '../src/email/tracking/tracking-events';
import { CampaignPlanner } from '../src/newsletter/campaigns/campaign-planner';
import { CampaignProgress } from '../src/newsletter/campaigns/campaign-progress';
import { Campaign } from '../src/newsletter/campaigns/schemas/campaign.schema';
import { createTestApp, TestApp } from './helpers/app';
import { drainEmailQueue, type DrainOptions } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { useMailApp } from './helpers/mail-app';
import { ReceivedMail, TestSmtpServer } from './helpers/smtp';

const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 20,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 500,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 100, maxMs: 2_000 },
};

const LINK = 'https://shop.example.com/sale?from=mail&amp;x=1';
const LINK_URL = 'https://shop.example.com/sale?from=mail&x=1';
const HTML =
  '<h1>Hello {{firstName}}</h1><p>Our <a href="' +
  LINK +
  '">sale</a> and <a href="mailto:help@example.com">help</a>.</p>' +
  '<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';

/** A received message with quoted-printable soft breaks and escapes undone. */
const decoded = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

const pathOf = (url: string) => new URL(url).pathname;

describe('Newsletter campaigns, fan-out and tracking', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let contacts: Model<Contact>;
  let campaigns: Model<Campaign>;
  let jobs: Model<EmailJob>;
  let events: Model<EmailEvent>;
  let admin: Session;
  let viewer: Session;
  let appId: string;

  const mailApp = useMailApp({
    env: { MAIL_FROM: 'News <news@mail.example.com>' },
    overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }],
  });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    campaigns = t.app.get<Model<Campaign>>(getModelToken(Campaign.name));
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    events = t.app.get<Model<EmailEvent>>(getModelToken(EmailEvent.name));
  });
  beforeEach(async () => {
    ({ admin, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const base = () => `/admin/${appId}/newsletter/campaigns`;
  const createCampaign = async (body: Record<string, unknown> = {}) => {
    const res = await admin.http.post(base(), {
      name: 'November',
      subject: 'News for {{firstName}}',
      htmlContent: HTML,
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body.data._id as string;
  };
  const campaignOf = (id: string) => campaigns.findById(id).lean<Campaign>().orFail().exec();
  /** Works the queue, then runs the campaign recounts the worker's hints scheduled (throttled otherwise). */
  const drain = async (options?: DrainOptions) => {
    await drainEmailQueue(t, options);
    await t.app.get(CampaignProgress).flush();
  };

  /**
   * People of the audience test, by `i % 10`: 0, 7, 8, 9 receive (7 has never been asked for `blog`);
   * 1 unsubscribed, 2 hard bounce, 3 opted out (suppression), 4 `blog` false, 5 erased, 6 another app only.
   */
  async function seedPeople(count: number, kind: (i: number) => number = (i) => i % 10): Promise<string[]> {
    const now = new Date();
    const expected: string[] = [];
    const suppression = t.app.get(SuppressionService);
    const docs = [];
    for (let i = 0; i < count; i++) {
      const email = `person${i}@example.com`;
      const k = kind(i);
      const subscription = (status: string, app = appId) => ({
        appId: app,
        status,
        source: 'import',
        referralUrl: null,
        subscribedAt: now,
        unsubscribedAt: status === 'active' ? null : now,
      });
      docs.push({
        _id: new Types.ObjectId(),
        email: k === 5 ? `erased-${i}@erased.invalid` : email,
        firstName: `P${i}`,
        lastName: null,
        locale: null,
        tags: [],
        consent: { outreach: null, commercial: null, blog: k === 4 ? false : k === 7 ? null : true },
        consentHistory: [],
        subscriptions: [subscription(k === 1 ? 'unsubscribed' : 'active', k === 6 ? 'other-app' : appId)],
        deletedAt: k === 5 ? now : null,
        revision: 0,
        createdAt: now,
        updatedAt: now,
      });
      if (k === 2) await suppression.suppress({ email, reason: 'hard_bounce', source: 'test' });
      if (k === 3) await suppression.suppress({ email, reason: 'opt_out', source: 'test' });
      if ([0, 7, 8, 9].includes(k)) expected.push(email);
    }
    await contacts.collection.insertMany(docs);
    return expected.sort();
  }

  const recipients = () => smtp.received.flatMap((mail) => mail.to).sort();
  const mailTo = (address: string) => smtp.received.find((mail) => mail.to.includes(address))!;

  describe('admin routes', () => {
    it('creates a draft, lists, reads, edits and deletes it; viewers only read', async () => {
      const id = await createCampaign({ textContent: 'Hi {{firstName}}' });
      const got = await viewer.http.get(`${base()}/${id}`);
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({
        _id: id,
        appId,
        name: 'November',
        status: 'draft',
        stats: { total: 0, sent: 0, failed: 0 },
        sentAt: null,
        completedAt: null,
        createdBy: admin.user.id,
      });
      expect((await viewer.http.post(base(), { name: 'x', subject: 'x', htmlContent: 'x' })).status).toBe(
        403,
      );

      const list = await viewer.http.get(base(), { query: { status: 'draft' } });
      expect(list.body.pagination.total).toBe(1);
      expect((await viewer.http.get(base(), { query: { status: 'sent' } })).body.data).toEqual([]);

      const patched = await admin.http.patch(`${base()}/${id}`, { name: 'December' });
      expect(patched.status).toBe(200);
      expect(patched.body.data.name).toBe('December');
      expect((await admin.http.patch(`${base()}/${id}`, { subject: '{{#if}}' })).status).toBe(400);

      expect((await admin.http.delete(`${base()}/${id}`)).status).toBe(200);
      expect((await admin.http.get(`${base()}/${id}`)).status).toBe(404);
    });

    it('answers 404 for an unknown app and for another app’s campaign, 400 for a missing field', async () => {
      const id = await createCampaign();
      expect((await admin.http.get(`/admin/no-such-app/newsletter/campaigns`)).status).toBe(404);
      const other = (await seedApp(t)).id;
      expect((await admin.http.get(`/admin/${other}/newsletter/campaigns/${id}`)).status).toBe(404);
      expect((await admin.http.post(`/admin/${other}/newsletter/campaigns/${id}/send`)).status).toBe(404);
      const missing = await admin.http.post(base(), { name: 'x', subject: 'y' });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatch(/htmlContent/);
      const unknownTemplate = await admin.http.post(base(), {
        name: 'x',
        templateId: String(new Types.ObjectId()),
      });
      expect(unknownTemplate.status).toBe(400);
      expect(unknownTemplate.body.error).toMatch(/templateId/);
    });

    it('sends a test copy (subject marked, tracked like the send but not counted, unsubscribe headers) and refuses a suppressed address', async () => {
      const id = await createCampaign();
      const res = await admin.http.post(`${base()}/${id}/test`, { email: 'Tester@Example.com' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        message: expect.any(String),
        data: { jobId: expect.any(String) },
      });
      await t.app
        .get(SuppressionService)
        .suppress({ email: 'gone@example.com', reason: 'hard_bounce', source: 'test' });
      expect((await admin.http.post(`${base()}/${id}/test`, { email: 'gone@example.com' })).status).toBe(200);
      await drain();
      expect(recipients()).toEqual(['tester@example.com']);
      const mail = decoded(smtp.received[0]);
      expect(smtp.received[0].headers.subject).toBe('[Test] News for');
      // The text part keeps the link; the HTML has the send's click redirect and pixel (test tokens).
      expect(mail).toContain(LINK_URL);
      expect(mail).toMatch(/href="http[^"]*\/c\/[^"]+"/);
      expect(mail).toContain('/o/');
      expect(smtp.received[0].headers['list-unsubscribe']).toMatch(/^<http.*\/unsubscribe\/.+>$/);
      expect((await campaignOf(id)).status).toBe('draft');
    });
  });

  describe('sending', () => {
    it('reaches exactly the audience, once each, and ends `sent` with its statistics', async () => {
      const expected = await seedPeople(1_000);
      const id = await createCampaign();

      const sent = await admin.http.post(`${base()}/${id}/send`);
      expect(sent.status).toBe(200);
      expect(sent.body.data).toEqual({ status: 'sending', jobId: expect.any(String) });
      expect((await admin.http.post(`${base()}/${id}/send`)).status).toBe(409);
      expect((await admin.http.patch(`${base()}/${id}`, { name: 'late' })).status).toBe(409);
      expect((await admin.http.delete(`${base()}/${id}`)).status).toBe(409);

      await drain({ deadlineMs: 60_000 });

      expect(recipients()).toEqual(expected);
      expect(new Set(recipients()).size).toBe(smtp.received.length);
      const campaign = (await admin.http.get(`${base()}/${id}`)).body.data;
      expect(campaign).toMatchObject({
        status: 'sent',
        stats: { total: expected.length, sent: expected.length, failed: 0 },
      });
      expect(campaign.completedAt).toEqual(expect.any(String));

      // Observable through the e-mail-jobs endpoints: the plan job and one job per message.
      const listed = await admin.http.get('/admin/email-jobs', { query: { campaignId: id, limit: 1 } });
      expect(listed.body.pagination.total).toBe(expected.length + 1);
      const plan = await admin.http.get('/admin/email-jobs', {
        query: { campaignId: id, type: 'email.batch.plan' },
      });
      expect(plan.body.data).toHaveLength(1);
      expect(plan.body.data[0]._id).toBe(sent.body.data.jobId);
      expect(plan.body.data[0].status).toBe('completed');
    }, 120_000);

    it('personalises each message: variables, text part, unsubscribe headers and tracked links', async () => {
      await seedPeople(1);
      const id = await createCampaign();
      await admin.http.post(`${base()}/${id}/send`);
      await drain();

      const mail = mailTo('person0@example.com');
      expect(mail.headers.subject).toBe('News for P0');
      expect(mail.headers['list-unsubscribe']).toMatch(/^<http.*\/unsubscribe\/[\w.-]+>$/);
      expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      const body = decoded(mail);
      const [text, html] = body.split('Content-Type: text/html');
      // The generated text part: headings keep their case, links keep their real URL.
      expect(text).toContain('Hello P0');
      expect(text).toContain(LINK_URL);
      expect(html).toMatch(/href="http[^"]*\/c\/[\w.-]+"/);
      expect(html).toMatch(/<img src="http[^"]*\/o\/[\w.-]+\.gif"/);
      expect(html).toContain('href="mailto:help@example.com"');
      expect(html).toMatch(/href="http[^"]*\/unsubscribe\/[\w.-]+"/);
      expect((await campaignOf(id)).links).toEqual([LINK_URL]);
      // The queue holds what differs per person; the body is composed from the campaign when it is sent.
      const job = await jobs.findOne({ campaignId: id, type: 'email.send' }).lean<EmailJob>().orFail().exec();
      expect(job.payload).toEqual({
        to: 'person0@example.com',
        appId,
        campaignId: id,
        contactId: expect.any(String),
        composer: 'campaign',
        variables: { firstName: 'P0', lastName: null, email: 'person0@example.com' },
        unsubscribeUrl: mail.headers['list-unsubscribe'].slice(1, -1),
      });
    });

    it('resumes an interrupted plan after its checkpoint: no duplicate, no gap', async () => {
      const expected = await seedPeople(1_300, () => 0);
      const planner = t.app.get(CampaignPlanner);
      const original = planner.checkpoint.bind(planner);
      let calls = 0;
      // The plan dies after queuing its second batch, before recording that batch's checkpoint.
      const spy = jest.spyOn(planner, 'checkpoint').mockImplementation((...args) => {
        calls += 1;
        if (calls === 2) return Promise.reject(new Error('planner process died'));
        return original(...args);
      });
      try {
        const id = await createCampaign();
        const jobId = (await admin.http.post(`${base()}/${id}/send`)).body.data.jobId as string;
        // The engine retries the failed plan (after a short backoff in this test).
        await drain({ deadlineMs: 60_000 });
        const plan = await jobs.findById(jobId).lean<EmailJob>().orFail().exec();
        expect(plan).toMatchObject({ status: 'completed', attempts: 2, lastError: 'planner process died' });
        // Run 1 queued batches 1 and 2 (checkpointed 1); run 2 queued 2 again (no new job) and 3.
        expect(plan.result).toEqual({ enqueued: 300, alreadyQueued: 500 });

        expect(recipients()).toEqual(expected);
        const campaign = await campaignOf(id);
        expect(campaign.status).toBe('sent');
        expect(campaign.stats).toEqual({ total: 1_300, sent: 1_300, failed: 0 });
      } finally {
        spy.mockRestore();
      }
    }, 120_000);

    it('ends `failed` when no message could be sent', async () => {
      await seedPeople(1, () => 0);
      smtp.verdict = () => ({ accept: false, code: 550, message: 'No such user' });
      try {
        const id = await createCampaign();
        await admin.http.post(`${base()}/${id}/send`);
        await drain();
        const campaign = await campaignOf(id);
        expect(campaign.status).toBe('failed');
        expect(campaign.stats).toEqual({ total: 1, sent: 0, failed: 1 });
        expect(campaign.completedAt).toBeInstanceOf(Date);
      } finally {
        smtp.verdict = () => ({ accept: true });
      }
    });

    it('ends `failed` with an empty audience (the completed plan finishes it)', async () => {
      const id = await createCampaign();
      await admin.http.post(`${base()}/${id}/send`);
      await drain();
      const campaign = await campaignOf(id);
      expect(campaign).toMatchObject({ status: 'failed', stats: { total: 0, sent: 0, failed: 0 } });
    });
  });

  describe('completion counted from the queue', () => {
    /**
     * The worker's hints to the campaigns vanish, as when its process dies right after recording outcomes.
     */
    const losingHints = () => {
      const emitter = t.app.get(EventEmitter2);
      const emit = emitter.emit.bind(emitter);
      return jest
        .spyOn(emitter, 'emit')
        .mockImplementation((event, ...values: unknown[]) =>
          event === EmailEvents.CampaignJobsFinished ? false : emit(event, ...values),
        );
    };
    const messagesTo = (id: string, addresses: string[]) => ({
      campaignId: id,
      type: 'email.send' as const,
      'payload.to': trusted({ $in: addresses }),
    });

    it('completes with exact figures through the sweep when the worker’s notice is lost', async () => {
      await seedPeople(12, () => 0);
      // One permanent refusal: a message that ends `dead` counts as failed.
      smtp.verdict = (mail) =>
        mail.to.includes('person5@example.com')
          ? { accept: false, code: 550, message: 'No such user' }
          : { accept: true };
      const lost = losingHints();
      try {
        const id = await createCampaign();
        await admin.http.post(`${base()}/${id}/send`);
        await drain();
        expect(smtp.received).toHaveLength(11);
        // Every outcome is recorded on the jobs, but the campaign heard of none of them.
        expect(await campaignOf(id)).toMatchObject({
          status: 'sending',
          stats: { total: 0, sent: 0, failed: 0 },
        });

        const progress = t.app.get(CampaignProgress);
        expect(await progress.sweep()).toBe(1);
        const campaign = await campaignOf(id);
        expect(campaign).toMatchObject({ status: 'sent', stats: { total: 12, sent: 11, failed: 1 } });
        expect(campaign.completedAt).toBeInstanceOf(Date);
        // Swept again: a finished campaign is left alone.
        expect(await progress.sweep()).toBe(0);
        expect((await campaignOf(id)).completedAt).toEqual(campaign.completedAt);
      } finally {
        lost.mockRestore();
        smtp.verdict = () => ({ accept: true });
      }
    });

    it('keeps exact figures however often outcomes are reported, and waits for retries', async () => {
      await seedPeople(10, () => 0);
      const lost = losingHints();
      const id = await createCampaign();
      try {
        await admin.http.post(`${base()}/${id}/send`);
        await drain();
      } finally {
        lost.mockRestore();
      }
      // Three messages were refused for now and wait for a retry (written as a worker records it).
      const retrying = ['person0@example.com', 'person1@example.com', 'person2@example.com'];
      await jobs
        .updateMany(messagesTo(id, retrying), {
          $set: { status: 'failed', scheduledAt: new Date(Date.now() + 3_600_000) },
          $unset: { messageId: '' },
        })
        .exec();
      const progress = t.app.get(CampaignProgress);
      // The same outcome batch reported several times over (hints and sweeps): set, never added up.
      const hint = () =>
        t.app.get(EventEmitter2).emit(EmailEvents.CampaignJobsFinished, { campaignIds: [id] });
      for (let i = 0; i < 3; i += 1) hint();
      await progress.flush();
      await progress.sweep();
      hint();
      await progress.flush();
      expect(await campaignOf(id)).toMatchObject({
        status: 'sending',
        stats: { total: 10, sent: 7, failed: 0 },
      });

      // The retries end: one delivered, two dead after their last attempt.
      await jobs
        .updateOne(messagesTo(id, ['person0@example.com']), {
          $set: { status: 'completed', messageId: 'retried@mail.example.com' },
        })
        .exec();
      await jobs
        .updateMany(messagesTo(id, retrying.slice(1)), { $set: { status: 'dead', lastError: 'gave up' } })
        .exec();
      hint();
      hint();
      await progress.flush();
      await progress.sweep();
      expect(await campaignOf(id)).toMatchObject({
        status: 'sent',
        stats: { total: 10, sent: 8, failed: 2 },
      });
    });
  });

  describe('links of a received mail', () => {
    let mail: ReceivedMail;
    let campaignId: string;
    let person: Contact;

    beforeEach(async () => {
      await seedPeople(1);
      campaignId = await createCampaign();
      await admin.http.post(`${base()}/${campaignId}/send`);
      await drain();
      mail = mailTo('person0@example.com');
      person = await contacts.findOne({ email: 'person0@example.com' }).lean<Contact>().orFail().exec();
    });

    const linkIn = (pattern: RegExp) => {
      const found = pattern.exec(decoded(mail));
      if (!found) throw new Error(`no ${String(pattern)} in:\n${mail.raw}`);
      return found[1];
    };

    it('unsubscribes with the one-click POST of the List-Unsubscribe header', async () => {
      const url = /^<(.+)>$/.exec(mail.headers['list-unsubscribe'])![1];
      const res = await t.http.post(pathOf(url), undefined, {
        payload: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(200);
      const after = await contacts.findById(person._id).lean<Contact>().orFail().exec();
      expect(after.subscriptions.find((s) => s.appId === appId)?.status).toBe('unsubscribed');
    });

    it('redirects a click to the stored URL, whatever the query says; a tampered token is 404', async () => {
      const click = linkIn(/href="(http[^"]*\/c\/[\w.-]+)"/);
      const res = await t.http.get(pathOf(click), { query: { url: 'https://evil.example.com' } });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(LINK_URL);

      const token = pathOf(click).split('/').pop()!;
      const tampered = token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6);
      const bad = await t.http.get(`/c/${tampered}`);
      expect(bad.status).toBe(404);
      expect(bad.body).toMatchObject({ success: false });
      expect((await t.http.get('/c/not-a-token')).status).toBe(404);

      await t.app.get(TrackingEvents).flush();
      const recorded = await events.find({ type: 'clicked' }).lean<EmailEvent[]>().exec();
      expect(recorded).toEqual([
        expect.objectContaining({
          appId,
          campaignId,
          contactId: String(person._id),
          messageId: `campaign:${campaignId}:${String(person._id)}`,
          provider: 'tracking',
          linkIndex: 0,
          url: LINK_URL,
        }),
      ]);
    });

    it('answers the open pixel with a GIF for any token and records genuine opens', async () => {
      const pixel = linkIn(/<img src="(http[^"]*\/o\/[\w.-]+\.gif)"/);
      const agent = 'Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko)';
      const res = await t.http.get(pathOf(pixel), { headers: { 'user-agent': agent } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('image/gif');
      expect(res.headers['cache-control']).toBe('no-store');
      // An image's headers, not the API's: a webmail page on another origin may show it (helmet's
      // same-origin resource policy would block it there); no CORS or page policies; the request id stays.
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBeUndefined();
      expect(res.headers['access-control-expose-headers']).toBeUndefined();
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      // HEAD (a link checker) is answered but records no open.
      const head = await t.http.request('HEAD', pathOf(pixel));
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toBe('image/gif');
      const withoutGif = await t.http.get(pathOf(pixel).replace(/\.gif$/, ''), {
        headers: { 'user-agent': 'GoogleImageProxy' },
      });
      expect(withoutGif.status).toBe(200);
      const invalid = await t.http.get('/o/forged.gif');
      expect(invalid.status).toBe(200);
      expect(invalid.headers['content-length']).toBe(String(res.text.length));

      await t.app.get(TrackingEvents).flush();
      const opens = await events.find({ type: 'opened' }).sort({ createdAt: 1 }).lean<EmailEvent[]>().exec();
      expect(opens).toHaveLength(2);
      expect(opens[0]).toMatchObject({
        campaignId,
        contactId: String(person._id),
        userAgent: agent,
        automated: false,
      });
      expect(opens[1]).toMatchObject({ automated: true });
    });
  });

  it('writes buffered events at shutdown', async () => {
    const second = await createTestApp();
    try {
      const { TrackingLinks } = await import('../src/email/tracking/tracking-links');
      const open = second.app
        .get(TrackingLinks)
        .openUrl({ campaignId: String(new Types.ObjectId()), contactId: 'c1', appId });
      expect((await second.http.get(pathOf(open))).status).toBe(200);
      expect(await events.countDocuments({ contactId: 'c1' })).toBe(0);
    } finally {
      await second.close();
    }
    expect(await events.countDocuments({ contactId: 'c1', type: 'opened' })).toBe(1);
  });
});
