import { EventEmitter2 } from '@nestjs/event-emitter';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { App } from '../src/apps/schemas/app.schema';
import { LinkTokens } from '../src/common/crypto/link-token';
import { JOINLIST_RATE_LIMIT } from '../src/contacts/joinlist/joinlist.controller';
import { type Contact } from '../src/contacts/schemas/contact.schema';
import { NewsletterSignupEvent, SignupEvents } from '../src/contacts/signup.events';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { drainEmailQueue } from './helpers/email-queue';
import { TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import type { HttpClient } from './helpers/http';
import { createSessions, Session } from './helpers/session';
import { TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const ORIGIN = 'https://www.shop.test';
const PUBLIC_BASE_URL = 'https://admin.example.test';

describe('Joinlist and unsubscribe', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let admin: Session;
  let app: App;
  let page: HttpClient;
  let contacts: Model<Contact>;
  let jobs: Model<EmailJob>;
  let signups: NewsletterSignupEvent[];
  let client = 0;

  const mailApp = useMailApp({ env: { PUBLIC_BASE_URL } });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    contacts = t.app.get<Model<Contact>>(getModelToken('Contact'));
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    t.app.get(EventEmitter2).on(SignupEvents.NewsletterSignup, (event: NewsletterSignupEvent) => {
      signups.push(event);
    });
  });
  beforeEach(async () => {
    ({ admin } = await createSessions(t));
    app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
    signups = [];
    // A client address per test, so the per-IP limit of one test does not spill into the next.
    client += 1;
    page = t.http.with({ 'x-app-key': app.publicKey, origin: ORIGIN, 'x-forwarded-for': `10.9.0.${client}` });
  });

  const join = (body: Record<string, unknown>, http = page) => http.post('/joinlist', body);
  const drain = () => drainEmailQueue(t);
  const person = (email: string) => contacts.findOne({ email }).lean<Contact>().exec();

  describe('POST /joinlist', () => {
    it('signs the person up: blog consent, an active subscription, a ledger event, an unsubscribe link', async () => {
      const res = await join({
        email: ' Ada@Example.com ',
        firstName: 'Ada',
        locale: 'fr',
        source: 'footer-form',
        referralUrl: 'https://www.shop.test/blog/post-1',
        appId: app.id,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        alreadySubscribed: false,
        // Sealed: one opaque base64url segment (docs/decisions/security-public-answers.md).
        unsubscribeUrl: expect.stringMatching(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/[A-Za-z0-9_-]+$`)),
      });

      const stored = await person('ada@example.com');
      expect(stored).toMatchObject({
        firstName: 'Ada',
        locale: 'fr',
        consent: { blog: true, outreach: null, commercial: null },
        subscriptions: [
          {
            appId: app.id,
            status: 'active',
            source: 'footer-form',
            referralUrl: 'https://www.shop.test/blog/post-1',
          },
        ],
      });
      expect(stored!.consentHistory).toEqual([
        expect.objectContaining({
          category: 'blog',
          status: true,
          source: 'footer-form',
          appId: app.id,
          actor: 'self',
          ip: `10.9.0.${client}`,
          referralUrl: 'https://www.shop.test/blog/post-1',
          at: expect.any(Date),
        }),
      ]);
      expect(signups).toEqual([
        expect.objectContaining({
          appId: app.id,
          email: 'ada@example.com',
          firstName: 'Ada',
          source: 'footer-form',
        }),
      ]);
    });

    it('answers a repeat like a first signup, appends nothing, and mails the welcome once', async () => {
      expect((await join({ email: 'ada@example.com', firstName: 'Ada' })).body.alreadySubscribed).toBe(false);
      const again = await join({ email: 'ADA@example.com' });
      // A public answer does not tell that the address is a subscriber
      // (docs/decisions/security-public-answers.md).
      expect(again.body.alreadySubscribed).toBe(false);
      expect((await person('ada@example.com'))!.consentHistory).toHaveLength(1);
      expect(signups).toHaveLength(1);

      await drain();
      expect(smtp.received).toHaveLength(1);
      const mail = smtp.received[0];
      expect(mail.to).toEqual(['ada@example.com']);
      expect(mail.headers.subject).toBe('Welcome to Shop');
      expect(mail.headers['list-unsubscribe']).toMatch(
        new RegExp(`^<${PUBLIC_BASE_URL}/unsubscribe/[^>]+>$`),
      );
      expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      expect(mail.raw).toContain('Hello Ada');
    });

    it('does not mail the welcome again once its job has expired (a repeat a day or more later)', async () => {
      await join({ email: 'eve@example.com' });
      await drain();
      expect(smtp.received).toHaveLength(1);
      // Two days on, the retention TTL has removed the welcome's job, and with it its idempotency key.
      const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
      await contacts.updateOne(
        { email: 'eve@example.com' },
        { $set: { 'subscriptions.0.subscribedAt': twoDaysAgo } },
      );
      await jobs.deleteMany({});

      expect((await join({ email: 'eve@example.com' })).status).toBe(200);
      await drain();
      expect(await jobs.countDocuments()).toBe(0);
      expect(smtp.received).toHaveLength(1);
    });

    it('keeps one person and one ledger event when the same new address signs up five times at once', async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => join({ email: 'gus@example.com' })));
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
      expect(await contacts.countDocuments({ email: 'gus@example.com' })).toBe(1);
      expect((await person('gus@example.com'))!.consentHistory).toHaveLength(1);
      expect(signups).toHaveLength(1);
      await drain();
      expect(smtp.received).toHaveLength(1);
    });

    it("uses the app's welcome template in the person's language", async () => {
      const template = await admin.http.post('/admin/templates', {
        appId: app.id,
        name: 'welcome',
        language: 'de',
        subject: 'Willkommen, {{firstName}}',
        htmlTemplate: '<p>Hallo {{firstName}} ({{email}}) bei {{appName}}</p>',
        textTemplate: 'Hallo {{firstName}}',
      });
      expect(template.body.success).toBe(true);
      await join({ email: 'bea@example.com', firstName: 'Bea', locale: 'de' });
      await join({ email: 'cy@example.com', firstName: 'Cy', locale: 'it' });
      await drain();
      const subjects = Object.fromEntries(smtp.received.map((m) => [m.to[0], m.headers.subject]));
      // No Italian template: the German one is not a fallback for Italian, the built-in default is.
      expect(subjects).toEqual({ 'bea@example.com': 'Willkommen, Bea', 'cy@example.com': 'Welcome to Shop' });
    });

    it('does not re-subscribe after an unsubscribe by itself (a confirmation mail does)', async () => {
      const first = await join({ email: 'dan@example.com' });
      const token = String(first.body.unsubscribeUrl).split('/').pop()!;
      expect((await t.http.post(`/unsubscribe/${token}`)).status).toBe(200);
      const again = await join({ email: 'dan@example.com' });
      expect(again.body.alreadySubscribed).toBe(false);
      const stored = await person('dan@example.com');
      expect(stored!.subscriptions[0].status).toBe('unsubscribed');
      expect(stored!.consentHistory.map((e) => [e.source, e.status])).toEqual([
        ['joinlist', true],
        ['unsubscribe', false],
      ]);
    });

    it('keeps an opt-out or a bounce suppression when the person signs up again', async () => {
      const suppression = t.app.get(SuppressionService);
      await suppression.suppress({ email: 'eve@example.com', reason: 'opt_out', source: 'contacts.opt-out' });
      await suppression.suppress({ email: 'fay@example.com', reason: 'hard_bounce', source: 'webhook' });
      expect((await join({ email: 'eve@example.com' })).status).toBe(200);
      // A hard-bounced address can receive nothing, not even the confirmation: the answer says so.
      expect((await join({ email: 'fay@example.com' })).status).toBe(422);
      expect(await suppression.isSuppressed('eve@example.com')).toBe(true);
      expect(await suppression.isSuppressed('fay@example.com')).toBe(true);
      await drain();
      // The opted-out person asked: only the confirmation link goes (docs/api/browser-forms.md).
      expect(smtp.received.map((mail) => mail.to)).toEqual([['eve@example.com']]);
      expect(smtp.received[0].raw).toMatch(/joinlist\/confirm\//);
    });

    it('gives a filled honeypot the same answer, and stores, mails and announces nothing', async () => {
      const res = await join({ email: 'bot@example.com', website: 'https://spam.test' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        alreadySubscribed: false,
        unsubscribeUrl: expect.stringMatching(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/`)),
      });
      expect(await contacts.countDocuments()).toBe(0);
      expect(await jobs.countDocuments()).toBe(0);
      expect(signups).toEqual([]);
      // Its link leads to the same page as any other, and unsubscribes no one.
      const token = String(res.body.unsubscribeUrl).split('/').pop()!;
      expect((await t.http.post(`/unsubscribe/${token}`)).status).toBe(200);
    });

    it('validates the body, naming the fields', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{}, /email/],
        [{ email: 'a@b' }, /email/],
        [{ email: 'not-an-address' }, /email/],
        [{ email: 'ada@example.com', locale: 'xx' }, /locale/],
        [{ email: 'ada@example.com', appId: '' }, /appId/],
        [{ email: 'ada@example.com', referralUrl: 'javascript:alert(1)' }, /referralUrl/],
        [{ email: 'ada@example.com', source: 'a b' }, /source/],
        [{ email: 'ada@example.com', firstName: null }, /firstName/],
        [{ email: 'ada@example.com', extra: 1 }, /extra/],
        // The placeholder of an erased person's record cannot be signed up to reach that record.
        [{ email: 'erased-665f1c0a9d3e4b2a1c0d9e8f@erased.invalid' }, /email/],
      ];
      for (const [body, field] of cases) {
        const res = await join(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.error).toMatch(field);
      }
      expect(await contacts.countDocuments()).toBe(0);
    });

    it("refuses an appId other than the key's app (403)", async () => {
      const other = await seedApp(t);
      const res = await join({ email: 'ada@example.com', appId: other.id });
      expect(res.status).toBe(403);
      expect(await contacts.countDocuments()).toBe(0);
    });

    it('refuses a missing or foreign Origin, an unknown key, a rotated key and an inactive app', async () => {
      const body = { email: 'ada@example.com' };
      expect((await join(body, page.with({ origin: 'https://evil.test' }))).status).toBe(403);
      expect((await t.http.post('/joinlist', body, { headers: { 'x-app-key': app.publicKey } })).status).toBe(
        403,
      );
      expect((await join(body, page.with({ 'x-app-key': 'pk_unknown' }))).status).toBe(401);
      expect((await join(body, t.http.with({ origin: ORIGIN }))).status).toBe(401);

      const rotated = await admin.http.post(`/admin/apps/${app.id}/rotate-key`);
      const old = await join(body);
      expect(old.status).toBe(403);
      expect(old.body.error).toMatch(/rotated/);
      expect((await join(body, page.with({ 'x-app-key': rotated.body.data.publicKey }))).status).toBe(200);

      expect((await admin.http.post(`/admin/apps/${app.id}/toggle`)).body.data.active).toBe(false);
      expect((await join(body, page.with({ 'x-app-key': rotated.body.data.publicKey }))).status).toBe(403);
    });

    it(`allows ${JOINLIST_RATE_LIMIT} signups per minute per client IP, then 429 with Retry-After`, async () => {
      for (let i = 0; i < JOINLIST_RATE_LIMIT; i++) {
        expect((await join({ email: `p${i}@example.com` })).status).toBe(200);
      }
      const refused = await join({ email: 'one-more@example.com' });
      expect(refused.status).toBe(429);
      expect(refused.body.success).toBe(false);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // Another client is not affected.
      expect(
        (await join({ email: 'other@example.com' }, page.with({ 'x-forwarded-for': '10.9.9.9' }))).status,
      ).toBe(200);
    });
  });

  describe('/unsubscribe/{token}', () => {
    const signUp = async (email: string, http = page) => {
      const res = await join({ email }, http);
      return String(res.body.unsubscribeUrl).split('/').pop()!;
    };

    it('GET shows a confirmation page that changes nothing, the same for any token', async () => {
      const token = await signUp('ada@example.com');
      const valid = await t.http.get(`/unsubscribe/${token}`);
      const invalid = await t.http.get('/unsubscribe/not-a-token');
      expect(valid.status).toBe(200);
      expect(valid.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(valid.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(valid.text).toContain('<form method="post" action="">');
      expect(valid.text).toContain('<html lang="en">');
      expect(valid.text).not.toMatch(/<script/i);
      expect(invalid.status).toBe(200);
      expect(invalid.text).toBe(valid.text);
      expect((await person('ada@example.com'))!.subscriptions[0].status).toBe('active');
    });

    it('POST unsubscribes from that app only; blog stays true while another subscription is active', async () => {
      const other = await seedApp(t, { allowedOrigins: [ORIGIN] });
      const token = await signUp('ada@example.com');
      await signUp('ada@example.com', page.with({ 'x-app-key': other.publicKey }));

      const res = await t.http.post(`/unsubscribe/${token}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      let stored = await person('ada@example.com');
      const statusOf = (appId: string) => stored!.subscriptions.find((s) => s.appId === appId)!.status;
      expect(statusOf(app.id)).toBe('unsubscribed');
      expect(statusOf(other.id)).toBe('active');
      expect(stored!.consent.blog).toBe(true);
      expect(stored!.subscriptions.find((s) => s.appId === app.id)!.unsubscribedAt).toEqual(expect.any(Date));

      // Unsubscribing from the last app withdraws blog consent, recorded in the ledger.
      const otherToken = t.app.get(LinkTokens).sign('unsubscribe', [String(stored!._id), other.id]);
      await t.http.post(`/unsubscribe/${otherToken}`);
      stored = await person('ada@example.com');
      expect(stored!.consent.blog).toBe(false);
      expect(stored!.consentHistory.at(-1)).toMatchObject({
        category: 'blog',
        status: false,
        source: 'unsubscribe',
        appId: other.id,
      });
    });

    it('takes the RFC 8058 one-click POST, form-encoded or multipart, without credentials', async () => {
      const a = await signUp('a@example.com');
      const b = await signUp('b@example.com');
      const formPost = await t.http.post(`/unsubscribe/${a}`, undefined, {
        payload: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(formPost.status).toBe(200);
      const boundary = 'xyzBOUNDARY';
      const multipartPost = await t.http.post(`/unsubscribe/${b}`, undefined, {
        payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      expect(multipartPost.status).toBe(200);
      expect(multipartPost.text).toBe(formPost.text);
      for (const email of ['a@example.com', 'b@example.com']) {
        expect((await person(email))!.subscriptions[0].status).toBe('unsubscribed');
      }
    });

    it('answers an invalid, forged or other-purpose token like a valid one, changing nothing', async () => {
      const token = await signUp('ada@example.com');
      const valid = await t.http.post(`/unsubscribe/${await signUp('zed@example.com')}`);
      const [payload] = token.split('.');
      const stored = await person('ada@example.com');
      const otherPurpose = t.app.get(LinkTokens).sign('open', [String(stored!._id), app.id]);
      for (const bad of ['x', `${payload}.AAAAAAAAAAAAAAAAAAAAAA`, otherPurpose, 'a'.repeat(600)]) {
        const res = await t.http.post(`/unsubscribe/${bad}`);
        expect({ bad, status: res.status }).toEqual({ bad, status: 200 });
        expect(res.text).toBe(valid.text);
      }
      expect((await person('ada@example.com'))!.subscriptions[0].status).toBe('active');
    });

    it('is idempotent: a second POST adds no ledger event', async () => {
      const token = await signUp('ada@example.com');
      await t.http.post(`/unsubscribe/${token}`);
      await t.http.post(`/unsubscribe/${token}`);
      expect((await person('ada@example.com'))!.consentHistory).toHaveLength(2);
    });
  });
});
