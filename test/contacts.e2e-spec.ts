import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ContactsService } from '../src/contacts/contacts.service';
import { Contact, type ConsentEvent } from '../src/contacts/schemas/contact.schema';
import { EmailService } from '../src/email/email.service';
import { ERASED_RECIPIENT_ERROR } from '../src/email/jobs/recipient-jobs.service';
import { EMAIL_JOB_STATUSES, EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { drainEmailQueue } from './helpers/email-queue';
import { TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';
import { TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 2,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 10,
  backoff: { baseMs: 100, maxMs: 1_000 },
};

interface SeedInput {
  email: string;
  firstName?: string;
  lastName?: string;
  tags?: string[];
  ip?: string;
  referralUrl?: string;
}

describe('Contacts (admin)', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let people: ContactsService;
  let email: EmailService;
  let suppression: SuppressionService;
  let contacts: Model<Contact>;
  let jobs: Model<EmailJob>;
  let admin: Session;
  let user: Session;
  let viewer: Session;
  let appId: string;

  const mailApp = useMailApp({ overrides: [{ provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS }] });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    people = t.app.get(ContactsService);
    email = t.app.get(EmailService);
    suppression = t.app.get(SuppressionService);
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
  });
  beforeEach(async () => {
    ({ admin, user, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  /** A person signed up to the app (a ledger event with IP and referral URL), then named and tagged. */
  async function seed(input: SeedInput): Promise<Contact> {
    const { contact } = await people.signUp({
      appId,
      email: input.email,
      firstName: input.firstName,
      source: 'joinlist',
      ip: input.ip,
      referralUrl: input.referralUrl,
    });
    if (input.lastName === undefined && input.tags === undefined) return contact;
    const { contact: named } = await people.change(contact, () => ({
      change: { set: { lastName: input.lastName ?? null, tags: input.tags ?? [] } },
      result: null,
    }));
    return named;
  }

  const idOf = (contact: Contact) => String(contact._id);
  const stored = (id: string) => contacts.findById(id).lean<Contact>().orFail().exec();
  const jobById = (id: string) => jobs.findById(id).lean<EmailJob>().orFail().exec();
  const emailsOf = (res: { body: { data: { email: string }[] } }) => res.body.data.map((c) => c.email);

  /** Runs the worker until nothing is due or waiting for a retry. */
  const drain = (deadlineMs?: number) => drainEmailQueue(t, { deadlineMs, dueOnly: true });

  describe('GET /admin/contacts', () => {
    it('lists live people newest first, without the consent history, in pages', async () => {
      for (const name of ['ann', 'bob', 'cid', 'dee', 'eve']) await seed({ email: `${name}@example.com` });
      const first = await viewer.http.get('/admin/contacts/', { query: { limit: 2 } });
      expect(first.status).toBe(200);
      expect(first.body.success).toBe(true);
      expect(emailsOf(first)).toEqual(['eve@example.com', 'dee@example.com']);
      expect(first.body.pagination).toMatchObject({
        page: 1,
        limit: 2,
        total: 5,
        pages: 3,
        totalCapped: false,
      });
      expect(first.body.data[0]).not.toHaveProperty('consentHistory');
      expect(first.body.data[0]).toMatchObject({
        _id: expect.any(String),
        firstName: null,
        lastName: null,
        locale: null,
        tags: [],
        consent: { outreach: null, commercial: null, blog: true },
        subscriptions: [expect.objectContaining({ appId, status: 'active', source: 'joinlist' })],
      });
      const last = await viewer.http.get('/admin/contacts', { query: { limit: 2, page: 3 } });
      expect(emailsOf(last)).toEqual(['ann@example.com']);
      const beyond = await viewer.http.get('/admin/contacts', { query: { limit: 2, page: 4 } });
      expect(beyond.body.data).toEqual([]);
      expect(beyond.body.pagination.total).toBe(5);
    });

    it('searches e-mail, first and last name in any case, treating the input as text', async () => {
      await seed({ email: 'maria.lopez@example.com' });
      await seed({ email: 'x1@example.com', firstName: 'Mariana' });
      await seed({ email: 'x2@example.com', lastName: 'DelMARIA' });
      await seed({ email: 'x3@example.com', firstName: 'Bob' });
      await seed({ email: 'axb@example.com' });
      const found = await viewer.http.get('/admin/contacts', { query: { search: 'MARIA' } });
      expect(emailsOf(found).sort()).toEqual(['maria.lopez@example.com', 'x1@example.com', 'x2@example.com']);
      // A regex character is a literal: "a.b" does not match "axb".
      const literal = await viewer.http.get('/admin/contacts', { query: { search: 'a.b' } });
      expect(literal.body.data).toEqual([]);
      const everything = await viewer.http.get('/admin/contacts', { query: { search: '.*' } });
      expect(everything.body.data).toEqual([]);
    });

    it('filters by consent category and status, and by tag, combined with search and pages', async () => {
      const yes = await seed({ email: 'yes@example.com', tags: ['vip'] });
      const no = await seed({ email: 'no@example.com', tags: ['vip', 'beta'] });
      await seed({ email: 'never@example.com', tags: ['beta'] });
      await admin.http.patch(`/admin/contacts/${idOf(yes)}/consent`, { category: 'outreach', status: true });
      await admin.http.patch(`/admin/contacts/${idOf(no)}/consent`, { category: 'outreach', status: false });

      const list = async (query: Record<string, string | number>) =>
        emailsOf(await viewer.http.get('/admin/contacts', { query })).sort();
      expect(await list({ category: 'outreach' })).toEqual(['yes@example.com']);
      expect(await list({ category: 'outreach', categoryStatus: 'true' })).toEqual(['yes@example.com']);
      // false is refused or withdrawn, not "never asked" (null).
      expect(await list({ category: 'outreach', categoryStatus: 'false' })).toEqual(['no@example.com']);
      expect(await list({ category: 'blog' })).toEqual([
        'never@example.com',
        'no@example.com',
        'yes@example.com',
      ]);
      expect(await list({ tag: 'vip' })).toEqual(['no@example.com', 'yes@example.com']);
      expect(await list({ tag: 'VIP' })).toEqual([]);
      expect(await list({ tag: 'beta', category: 'outreach', categoryStatus: 'false' })).toEqual([
        'no@example.com',
      ]);
      expect(await list({ tag: 'vip', search: 'YES' })).toEqual(['yes@example.com']);
      const paged = await viewer.http.get('/admin/contacts', {
        query: { category: 'blog', tag: 'beta', limit: 1, page: 2 },
      });
      expect(emailsOf(paged)).toEqual(['no@example.com']);
      expect(paged.body.pagination).toMatchObject({
        page: 2,
        limit: 1,
        total: 2,
        pages: 2,
        totalCapped: false,
      });
    });

    it('answers 400 naming the field for bad filters', async () => {
      const cases: [Record<string, string | number>, RegExp][] = [
        [{ categoryStatus: 'true' }, /categoryStatus requires category/],
        [{ category: 'news' }, /category/],
        [{ category: 'blog', categoryStatus: 'yes' }, /categoryStatus must be true or false/],
        [{ search: 'x'.repeat(101) }, /search/],
        [{ tag: 't'.repeat(51) }, /tag/],
        [{ limit: 0 }, /limit/],
        [{ limit: 101 }, /limit/],
        [{ page: 0 }, /page/],
        [{ sort: 'email' }, /sort/],
      ];
      for (const [query, message] of cases) {
        const res = await viewer.http.get('/admin/contacts', { query });
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.body).toEqual({ success: false, error: expect.stringMatching(message) });
      }
      expect((await viewer.http.get('/admin/contacts', { query: { search: 'x'.repeat(100) } })).status).toBe(
        200,
      );
    });
  });

  describe('GET /admin/contacts/{id}', () => {
    it('returns the person with the whole consent history, oldest first', async () => {
      const contact = await seed({ email: 'ada@example.com', firstName: 'Ada', ip: '198.51.100.7' });
      await admin.http.patch(`/admin/contacts/${idOf(contact)}/consent`, {
        category: 'commercial',
        status: true,
        reason: 'Asked at the fair',
      });
      const res = await viewer.http.get(`/admin/contacts/${idOf(contact)}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        _id: idOf(contact),
        email: 'ada@example.com',
        firstName: 'Ada',
        deletedAt: null,
        consent: { blog: true, commercial: true, outreach: null },
      });
      expect(res.body.data.consentHistory).toEqual([
        {
          category: 'blog',
          status: true,
          reason: 'Signed up',
          source: 'joinlist',
          appId,
          actor: 'self',
          ip: '198.51.100.7',
          referralUrl: null,
          topic: null,
          at: expect.any(String),
        },
        {
          category: 'commercial',
          status: true,
          reason: 'Asked at the fair',
          source: 'admin',
          appId: null,
          actor: admin.user.email,
          ip: null,
          referralUrl: null,
          topic: null,
          at: expect.any(String),
        },
      ]);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of ['64b7f0c2a1b2c3d4e5f60718', 'nope', '1'.repeat(30)]) {
        const res = await viewer.http.get(`/admin/contacts/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: 'Contact not found' });
      }
    });
  });

  describe('PATCH /admin/contacts/{id}/consent', () => {
    it('sets the category and appends one event, never rewriting earlier ones', async () => {
      const contact = await seed({
        email: 'ada@example.com',
        ip: '198.51.100.7',
        referralUrl: 'https://a.test/',
      });
      const before = (await stored(idOf(contact))).consentHistory;
      const res = await user.http.patch(`/admin/contacts/${idOf(contact)}/consent`, {
        category: 'blog',
        status: false,
        reason: 'Asked by phone',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, message: 'Consent updated' });
      expect(res.body.data.consent).toEqual({ outreach: null, commercial: null, blog: false });
      const after = (await stored(idOf(contact))).consentHistory;
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after).toHaveLength(before.length + 1);
      expect(after.at(-1)).toMatchObject({
        category: 'blog',
        status: false,
        reason: 'Asked by phone',
        source: 'admin',
        actor: user.user.email,
      });
      expect(after.at(-1)!.at.getTime()).toBeGreaterThanOrEqual(before.at(-1)!.at.getTime());
    });

    it('keeps every one of several concurrent changes, in the order they landed', async () => {
      const contact = await seed({ email: 'busy@example.com' });
      const before = await stored(idOf(contact));
      const changes = [
        { category: 'outreach', status: true, reason: 'c1' },
        { category: 'commercial', status: true, reason: 'c2' },
        { category: 'blog', status: false, reason: 'c3' },
        { category: 'outreach', status: false, reason: 'c4' },
        { category: 'commercial', status: false, reason: 'c5' },
        { category: 'blog', status: true, reason: 'c6' },
      ];
      const responses = await Promise.all(
        changes.map((body) => admin.http.patch(`/admin/contacts/${idOf(contact)}/consent`, body)),
      );
      expect(responses.map((res) => res.status)).toEqual(changes.map(() => 200));
      const record = await stored(idOf(contact));
      const appended = record.consentHistory.slice(1);
      expect(appended.map((event) => event.reason).sort()).toEqual(changes.map((c) => c.reason));
      const times = record.consentHistory.map((event) => event.at.getTime());
      expect(times).toEqual([...times].sort((a, b) => a - b));
      // The consent state is the last event of each category in ledger order.
      for (const category of ['outreach', 'commercial', 'blog'] as const) {
        const last = record.consentHistory.filter((event) => event.category === category).at(-1)!;
        expect(record.consent[category]).toBe(last.status);
      }
      expect(record.revision).toBe(before.revision + changes.length);
    });

    it('refuses bad bodies with 400 naming the field', async () => {
      const contact = await seed({ email: 'ada@example.com' });
      const cases: [unknown, RegExp][] = [
        [{ category: 'news', status: true }, /category/],
        [{ status: true }, /category/],
        [{ category: 'blog' }, /status/],
        [{ category: 'blog', status: 'true' }, /status/],
        [{ category: 'blog', status: true, reason: 'r'.repeat(501) }, /reason/],
        [{ category: 'blog', status: true, reason: null }, /reason/],
        [{ category: 'blog', status: true, actor: 'me' }, /actor/],
      ];
      for (const [body, message] of cases) {
        const res = await admin.http.patch(`/admin/contacts/${idOf(contact)}/consent`, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.error).toMatch(message);
      }
      expect((await stored(idOf(contact))).consentHistory).toHaveLength(1);
    });

    it('answers 404 for an unknown id', async () => {
      const res = await admin.http.patch('/admin/contacts/64b7f0c2a1b2c3d4e5f60718/consent', {
        category: 'blog',
        status: true,
      });
      expect(res.status).toBe(404);
    });

    it('lifts an opt-out suppression when consent is given again, never a bounce or complaint', async () => {
      const optedOut = await seed({ email: 'opted@example.com' });
      await admin.http.post(`/admin/contacts/${idOf(optedOut)}/opt-out`, {});
      expect(await suppression.isSuppressed('opted@example.com')).toBe(true);
      // Refusing a category does not lift anything.
      await admin.http.patch(`/admin/contacts/${idOf(optedOut)}/consent`, {
        category: 'blog',
        status: false,
      });
      expect(await suppression.isSuppressed('opted@example.com')).toBe(true);
      await admin.http.patch(`/admin/contacts/${idOf(optedOut)}/consent`, { category: 'blog', status: true });
      expect(await suppression.isSuppressed('opted@example.com')).toBe(false);

      for (const reason of ['hard_bounce', 'complaint'] as const) {
        const address = `${reason}@example.com`;
        const contact = await seed({ email: address });
        await suppression.suppress({ email: address, reason, source: 'webhook:test' });
        const res = await admin.http.patch(`/admin/contacts/${idOf(contact)}/consent`, {
          category: 'outreach',
          status: true,
        });
        expect(res.status).toBe(200);
        expect((await suppression.find(address))?.reason).toBe(reason);
      }
    });
  });

  describe('POST /admin/contacts/{id}/opt-out', () => {
    it('refuses every category with one event each and suppresses the address', async () => {
      const contact = await seed({ email: 'ada@example.com' });
      const res = await user.http.post(`/admin/contacts/${idOf(contact)}/opt-out`, { reason: 'Phoned in' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, message: expect.any(String) });
      expect(res.body.data.consent).toEqual({ outreach: false, commercial: false, blog: false });
      const events = (await stored(idOf(contact))).consentHistory.slice(1);
      expect(events.map((e) => [e.category, e.status]).sort()).toEqual([
        ['blog', false],
        ['commercial', false],
        ['outreach', false],
      ]);
      for (const event of events) {
        expect(event).toMatchObject({
          source: 'contacts.opt-out',
          actor: user.user.email,
          reason: 'Phoned in',
        });
      }
      expect(await suppression.find('ada@example.com')).toMatchObject({
        reason: 'opt_out',
        source: 'contacts.opt-out',
      });
      // No body at all is fine; a bad reason is not.
      expect((await user.http.post(`/admin/contacts/${idOf(contact)}/opt-out`)).status).toBe(200);
      const bad = await user.http.post(`/admin/contacts/${idOf(contact)}/opt-out`, { reason: 7 });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/reason/);
    });

    it('stops a broadcast already queued to the person', async () => {
      const contact = await seed({ email: 'ada@example.com' });
      const campaignId = '65a000000000000000000001';
      const other = await email.enqueueEmail({
        to: 'bob@example.com',
        campaignId,
        subject: 'Hi',
        text: 'Hi Bob',
      });
      const queued = await email.enqueueEmail({
        to: 'Ada@Example.com',
        campaignId,
        subject: 'Hi',
        text: 'Hi Ada',
      });
      expect((await admin.http.post(`/admin/contacts/${idOf(contact)}/opt-out`, {})).status).toBe(200);
      await drain();
      expect(smtp.received.map((mail) => mail.to)).toEqual([['bob@example.com']]);
      expect((await jobById(other.id)).status).toBe('completed');
      const job = await jobById(queued.id);
      expect(job.status).toBe('completed');
      expect(job.result).toEqual({ skipped: 'suppressed', reason: 'opt_out', stream: 'broadcast' });
    });
  });

  describe('GET /admin/contacts/{id}/export', () => {
    it('returns the record, consent history, subscriptions and the e-mails without their content', async () => {
      const contact = await seed({
        email: 'ada@example.com',
        firstName: 'Ada',
        referralUrl: 'https://ref.test/',
      });
      await email.enqueueEmail({ to: 'ada@example.com', subject: 'Receipt', html: '<p>secret body</p>' });
      await drain();
      await email.enqueueEmail(
        {
          to: 'ada@example.com',
          appId,
          template: { name: 'welcome', language: 'fr' },
          variables: { code: 'secret-variable' },
        },
        { scheduledAt: new Date(Date.now() + 3_600_000) },
      );
      await email.enqueueEmail({ to: 'bob@example.com', subject: 'Not hers', text: 'x' });
      const events = t.connection.db!.collection('email_events');
      await events.insertMany([
        {
          contactId: idOf(contact),
          appId,
          campaignId: 'c1',
          provider: 'tracking',
          type: 'opened',
          userAgent: 'UA/1',
          createdAt: new Date(Date.now() - 1_000),
        },
        {
          contactId: idOf(contact),
          appId,
          campaignId: 'c1',
          provider: 'tracking',
          type: 'clicked',
          url: 'https://shop.test/a',
          userAgent: 'UA/1',
          createdAt: new Date(),
        },
        {
          contactId: '64b7f0c2a1b2c3d4e5f60718',
          appId,
          campaignId: 'c1',
          provider: 'tracking',
          type: 'opened',
          userAgent: 'Not hers',
          createdAt: new Date(),
        },
      ]);

      const asked = Date.now();
      const res = await user.http.get(`/admin/contacts/${idOf(contact)}/export`);
      expect(res.status).toBe(200);
      const data = res.body.data;
      // Stamped while the request ran: not before it was sent, not after it was answered.
      expect(new Date(data.exportedAt).getTime()).toBeGreaterThanOrEqual(asked);
      expect(new Date(data.exportedAt).getTime()).toBeLessThanOrEqual(Date.now());
      expect(data.contact).toMatchObject({
        _id: idOf(contact),
        email: 'ada@example.com',
        firstName: 'Ada',
        subscriptions: [expect.objectContaining({ appId, referralUrl: 'https://ref.test/' })],
        consentHistory: [expect.objectContaining({ category: 'blog', referralUrl: 'https://ref.test/' })],
      });
      expect(data.emails).toEqual([
        expect.objectContaining({
          type: 'email.send',
          status: 'completed',
          subject: 'Receipt',
          template: null,
        }),
        expect.objectContaining({
          status: 'pending',
          subject: null,
          appId,
          template: { name: 'welcome', language: 'fr' },
          completedAt: null,
        }),
      ]);
      expect(data.events).toEqual([
        expect.objectContaining({
          type: 'clicked',
          url: 'https://shop.test/a',
          campaignId: 'c1',
          userAgent: 'UA/1',
        }),
        expect.objectContaining({ type: 'opened', url: null, provider: 'tracking' }),
      ]);
      expect(res.text).not.toMatch(/secret body|secret-variable|bob@example|Not hers/);
    });

    it('is for user and admin, not viewers, and 404 for an unknown id', async () => {
      const contact = await seed({ email: 'ada@example.com' });
      expect((await viewer.http.get(`/admin/contacts/${idOf(contact)}/export`)).status).toBe(403);
      expect((await admin.http.get(`/admin/contacts/${idOf(contact)}/export`)).status).toBe(200);
      expect((await admin.http.get('/admin/contacts/64b7f0c2a1b2c3d4e5f60718/export')).status).toBe(404);
    });
  });

  describe('DELETE /admin/contacts/{id} (GDPR)', () => {
    const person = {
      email: 'zelda.quimby@example.com',
      firstName: 'Zelda',
      lastName: 'Quimby',
      tags: ['vip-customer'],
      ip: '203.0.113.77',
      referralUrl: 'https://partner.example.org/landing-xyzzy',
    };

    /** Every document of every collection, as JSON, lower-cased. */
    async function everything(): Promise<string> {
      const collections = await t.connection.db!.collections();
      const dumps = await Promise.all(
        collections.map(async (collection) => ({
          name: collection.collectionName,
          docs: await collection.find().toArray(),
        })),
      );
      return JSON.stringify(dumps).toLowerCase();
    }

    async function seedEverywhere(): Promise<{
      contact: Contact;
      sent: string;
      queued: string;
      plan: string;
      sharedPlan: string;
    }> {
      const contact = await seed(person);
      await admin.http.patch(`/admin/contacts/${idOf(contact)}/consent`, {
        category: 'commercial',
        status: true,
        reason: 'Zelda agreed at the Quimby stand',
      });
      const sent = await email.enqueueEmail({
        to: 'Zelda.Quimby@example.com',
        appId,
        subject: 'Welcome Zelda',
        html: '<p>Dear Zelda Quimby</p>',
        text: 'Dear Zelda Quimby',
      });
      await drain();
      const queued = await email.enqueueEmail(
        { to: person.email, appId, template: { name: 'welcome' }, variables: { firstName: 'Zelda' } },
        { scheduledAt: new Date(Date.now() + 3_600_000), idempotencyKey: `welcome:${person.email}` },
      );
      const plan = await email.enqueueBatchPlan(
        {
          kind: 'recipients',
          appId,
          message: { subject: 'News', text: 'News' },
          recipients: [{ to: 'ZELDA.quimby@example.com', variables: { firstName: 'Zelda' } }],
        },
        { scheduledAt: new Date(Date.now() + 3_600_000) },
      );
      const sharedPlan = await email.enqueueBatchPlan(
        {
          kind: 'recipients',
          appId,
          message: { subject: 'News', text: 'News' },
          recipients: [{ to: 'bob@example.com' }, { to: person.email, variables: { firstName: 'Zelda' } }],
        },
        { scheduledAt: new Date(Date.now() + 3_600_000) },
      );
      const ticket = await user.http.post(`/${appId}/tickets`, {
        email: person.email,
        subject: 'Broken item',
        message: 'It arrived broken',
      });
      expect(ticket.status).toBe(201);
      const message = await user.http.post(`/${appId}/tickets/${ticket.body.data._id}/messages`, {
        content: 'Any news?',
        isCustomer: true,
        authorEmail: person.email,
        authorName: 'Zelda Quimby',
      });
      expect(message.status).toBe(201);
      const feedback = await t.http.post(`/${appId}/feedback`, {
        type: 'praise',
        subject: 'Great',
        message: 'Love it',
        email: 'Zelda.Quimby@Example.com',
      });
      expect(feedback.status).toBe(201);
      const key = await seedApiKey(t, appId);
      const want = await t.http.post(
        `/${appId}/wants`,
        { title: 'Dark mode', description: 'Please', category: 'ui', authorEmail: person.email },
        { headers: { 'x-api-key': key.value } },
      );
      expect(want.status).toBe(201);
      // An open recorded by the tracking pixel: its user agent describes the person's device.
      await t.connection.db!.collection('email_events').insertOne({
        contactId: idOf(contact),
        appId,
        campaignId: 'c1',
        messageId: `campaign:c1:${idOf(contact)}`,
        provider: 'tracking',
        type: 'opened',
        userAgent: 'ZeldaPhone/1.0 (Quimby edition)',
        automated: false,
        createdAt: new Date(),
      });
      return { contact, sent: sent.id, queued: queued.id, plan: plan.id, sharedPlan: sharedPlan.id };
    }

    it('leaves no personal data anywhere and keeps an anonymised consent history', async () => {
      const { contact, sent, queued, plan, sharedPlan } = await seedEverywhere();
      const id = idOf(contact);
      const before = await stored(id);
      // The seed really put the data in every store the scan looks at.
      const seeded = await everything();
      for (const needle of [person.email, 'zelda', 'quimby', person.ip, person.referralUrl]) {
        expect(seeded).toContain(needle.toLowerCase());
      }
      // The chat outbox holds the new ticket's and feedback's notices, which name the address.
      const notices = await t.connection.db!.collection('chat_notifications').find().toArray();
      expect(JSON.stringify(notices).toLowerCase()).toContain(person.email);

      const res = await admin.http.delete(`/admin/contacts/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.any(String) });

      const after = await everything();
      for (const needle of [person.email, 'zelda', 'quimby', person.ip, person.referralUrl, 'vip-customer']) {
        expect({ needle, found: after.includes(needle.toLowerCase()) }).toEqual({ needle, found: false });
      }

      // The record: placeholder address, no names, tags or locale; the ledger keeps what was decided.
      const erased = await stored(id);
      expect(erased.email).toBe(`erased-${id}@erased.invalid`);
      expect(erased).toMatchObject({ firstName: null, lastName: null, locale: null, tags: [] });
      expect(erased.deletedAt).toBeInstanceOf(Date);
      const kept = (event: ConsentEvent) => [
        event.category,
        event.status,
        event.at.getTime(),
        event.source,
        event.appId,
      ];
      expect(erased.consentHistory.slice(0, before.consentHistory.length).map(kept)).toEqual(
        before.consentHistory.map(kept),
      );
      expect(erased.consentHistory[0]).toMatchObject({ actor: 'self', ip: null, referralUrl: null });
      expect(erased.consentHistory[1]).toMatchObject({
        actor: admin.user.email,
        reason: '[erased] agreed at the [erased] stand',
      });
      // Consent ends with the erasure (recorded), and so do subscriptions.
      expect(erased.consent).toEqual({ outreach: false, commercial: false, blog: false });
      expect(erased.consentHistory.slice(before.consentHistory.length)).toEqual(
        ['outreach', 'commercial', 'blog'].map((category) =>
          expect.objectContaining({
            category,
            status: false,
            source: 'contacts.gdpr-delete',
            actor: admin.user.email,
          }),
        ),
      );
      expect(erased.subscriptions).toEqual([
        expect.objectContaining({
          appId,
          status: 'unsubscribed',
          referralUrl: null,
          unsubscribedAt: expect.any(Date),
        }),
      ]);

      // E-mail jobs: the queued one cancelled, every one scrubbed; statuses stay the contract's.
      const queuedJob = await jobById(queued);
      expect(queuedJob).toMatchObject({ status: 'dead', lastError: ERASED_RECIPIENT_ERROR });
      expect(queuedJob.payload).toEqual({
        to: `erased-${id}@erased.invalid`,
        erased: true,
        appId,
        template: { name: 'welcome' },
      });
      expect(queuedJob.idempotencyKey).toBe(`erased:${queued}`);
      const sentJob = await jobById(sent);
      expect(sentJob.status).toBe('completed');
      expect(sentJob.payload).toEqual({ to: `erased-${id}@erased.invalid`, erased: true, appId });
      expect(sentJob.result).toEqual({ messageId: sentJob.messageId, provider: 'smtp' });
      const planJob = await jobById(plan);
      expect(planJob).toMatchObject({ status: 'dead', lastError: ERASED_RECIPIENT_ERROR });
      // A plan for several people only loses this one, and still runs for the others.
      const sharedPlanJob = await jobById(sharedPlan);
      expect(sharedPlanJob.status).toBe('pending');
      expect(sharedPlanJob.payload.recipients).toEqual([{ to: 'bob@example.com' }]);
      const statuses = await jobs.distinct('status').exec();
      expect(statuses.every((status) => (EMAIL_JOB_STATUSES as readonly string[]).includes(status))).toBe(
        true,
      );

      // Placeholders in the other stores.
      const db = t.connection.db!;
      expect(await db.collection('tickets').findOne()).toMatchObject({
        email: `erased-${id}@erased.invalid`,
        messages: [
          expect.objectContaining({ authorEmail: `erased-${id}@erased.invalid`, content: 'Any news?' }),
        ],
      });
      expect((await db.collection('tickets').findOne())!.messages[0]).not.toHaveProperty('authorName');
      expect(await db.collection('feedback').findOne()).toMatchObject({
        email: `erased-${id}@erased.invalid`,
      });
      expect(await db.collection('wants').findOne()).toMatchObject({
        authorEmail: `erased-${id}@erased.invalid`,
      });
    });

    it('keeps the address suppressed: a new broadcast to it is not sent', async () => {
      const contact = await seed(person);
      expect((await admin.http.delete(`/admin/contacts/${idOf(contact)}`)).status).toBe(200);
      expect(await suppression.find(person.email)).toMatchObject({
        reason: 'opt_out',
        source: 'contacts.gdpr-delete',
      });
      const { id } = await email.enqueueEmail({
        to: person.email,
        campaignId: '65a000000000000000000001',
        subject: 'Hello again',
        text: 'Hi',
      });
      await drain();
      expect(smtp.attempts).toHaveLength(0);
      expect((await jobById(id)).result).toEqual({
        skipped: 'suppressed',
        reason: 'opt_out',
        stream: 'broadcast',
      });
    });

    it('shows the anonymised record, lists it nowhere, and answers 404 to every other route', async () => {
      const contact = await seed(person);
      const id = idOf(contact);
      expect((await admin.http.delete(`/admin/contacts/${id}`)).status).toBe(200);

      const shown = await viewer.http.get(`/admin/contacts/${id}`);
      expect(shown.status).toBe(200);
      expect(shown.body.data).toMatchObject({
        email: `erased-${id}@erased.invalid`,
        firstName: null,
        deletedAt: expect.any(String),
      });
      expect((await viewer.http.get('/admin/contacts')).body.data).toEqual([]);
      expect((await viewer.http.get('/admin/contacts', { query: { search: 'erased' } })).body.data).toEqual(
        [],
      );

      const again = await admin.http.delete(`/admin/contacts/${id}`);
      expect(again.status).toBe(404);
      expect(
        (await admin.http.patch(`/admin/contacts/${id}/consent`, { category: 'blog', status: true })).status,
      ).toBe(404);
      expect((await admin.http.post(`/admin/contacts/${id}/opt-out`, {})).status).toBe(404);
      expect((await admin.http.get(`/admin/contacts/${id}/export`)).status).toBe(404);

      // The address is free for a new person who signs up again.
      const { contact: fresh } = await people.signUp({ appId, email: person.email, source: 'joinlist' });
      expect(idOf(fresh)).not.toBe(id);
    });

    it('answers 409 while a message to the person is being sent, and completes when sent again', async () => {
      const contact = await seed(person);
      const id = idOf(contact);
      const { id: jobId } = await email.enqueueEmail({ to: person.email, subject: 'Hi Zelda', text: 'Hi' });
      // A worker holds the job (claimed, not finished).
      await jobs
        .updateOne({ _id: jobId }, { $set: { status: 'processing' }, $unset: { claimKey: '' } })
        .exec();

      const blocked = await admin.http.delete(`/admin/contacts/${id}`);
      expect(blocked.status).toBe(409);
      expect(blocked.body.error).toMatch(/being sent/);
      // Nothing is marked deleted: the person is still there to retry on.
      expect((await stored(id)).deletedAt).toBeNull();
      expect((await jobById(jobId)).payload.to).toBe(person.email);

      // The worker finishes; its result names the recipient, as SMTP answers do.
      await jobs
        .updateOne(
          { _id: jobId },
          {
            $set: {
              status: 'completed',
              result: { messageId: 'm1', provider: 'smtp', accepted: [person.email] },
            },
          },
        )
        .exec();
      expect((await admin.http.delete(`/admin/contacts/${id}`)).status).toBe(200);
      const job = await jobById(jobId);
      expect(job.result).toEqual({ messageId: 'm1', provider: 'smtp' });
      expect(JSON.stringify(job).toLowerCase()).not.toContain('zelda');
    });

    it('is for admins only, and 404 for unknown or malformed ids', async () => {
      const contact = await seed(person);
      expect((await viewer.http.delete(`/admin/contacts/${idOf(contact)}`)).status).toBe(403);
      expect((await user.http.delete(`/admin/contacts/${idOf(contact)}`)).status).toBe(403);
      expect((await stored(idOf(contact))).deletedAt).toBeNull();
      expect((await admin.http.delete('/admin/contacts/64b7f0c2a1b2c3d4e5f60718')).status).toBe(404);
      expect((await admin.http.delete('/admin/contacts/not-an-id')).status).toBe(404);
    });
  });

  it('lets viewers read but not change (consent, opt-out, export need user; delete needs admin)', async () => {
    const contact = await seed({ email: 'ada@example.com' });
    const id = idOf(contact);
    expect((await viewer.http.get('/admin/contacts')).status).toBe(200);
    expect((await viewer.http.get(`/admin/contacts/${id}`)).status).toBe(200);
    const writes = [
      viewer.http.patch(`/admin/contacts/${id}/consent`, { category: 'blog', status: false }),
      viewer.http.post(`/admin/contacts/${id}/opt-out`, {}),
      viewer.http.get(`/admin/contacts/${id}/export`),
      viewer.http.delete(`/admin/contacts/${id}`),
    ];
    expect((await Promise.all(writes)).map((res) => res.status)).toEqual([403, 403, 403, 403]);
    expect((await stored(id)).consentHistory).toHaveLength(1);
    expect(await suppression.isSuppressed('ada@example.com')).toBe(false);
  });
});
