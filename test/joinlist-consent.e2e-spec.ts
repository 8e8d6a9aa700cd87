import { EventEmitter2 } from '@nestjs/event-emitter';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { App } from '../src/apps/schemas/app.schema';
import { type Contact } from '../src/contacts/schemas/contact.schema';
import { NewsletterSignupEvent, SignupEvents } from '../src/contacts/signup.events';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { UNDELIVERABLE_ADDRESS } from '../src/email/suppression/undeliverable-address';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApiKey, seedApp } from './helpers/factories';
import type { HttpClient } from './helpers/http';
import { createSessions } from './helpers/session';
import { type ReceivedMail, TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const ORIGIN = 'https://www.shop.test';
const PUBLIC_BASE_URL = 'https://admin.example.test';

/** The text of a received message with quoted-printable soft breaks and escapes undone. */
const decoded = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

const CONFIRM_LINK = new RegExp(`${PUBLIC_BASE_URL}(/joinlist/confirm/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)`);
const hasConfirmLink = (mail: ReceivedMail) => CONFIRM_LINK.test(decoded(mail));

/** The path of the confirmation link in a message. */
function confirmPathIn(mail: ReceivedMail): string {
  const found = CONFIRM_LINK.exec(decoded(mail));
  if (!found) throw new Error(`no confirmation link in:\n${mail.raw}`);
  return found[1];
}

const pathOf = (url: unknown) => new URL(String(url)).pathname;

describe('Joinlist consent: signup-bound links and double opt-in', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
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
    app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
    signups = [];
    client += 1;
    page = pageOf(app);
  });

  const pageOf = (forApp: App) =>
    t.http.with({ 'x-app-key': forApp.publicKey, origin: ORIGIN, 'x-forwarded-for': `10.8.0.${client}` });
  const join = (body: Record<string, unknown>, http = page) => http.post('/joinlist', body);
  const drain = () => drainEmailQueue(t);
  const person = (email: string) => contacts.findOne({ email }).lean<Contact>().exec();
  const statusOf = async (email: string, appId = app.id) =>
    (await person(email))?.subscriptions.find((s) => s.appId === appId)?.status;
  const mailsTo = (email: string) => smtp.received.filter((mail) => mail.to.includes(email));
  /** Signs up, then unsubscribes with the link of that signup. */
  const subscribedThenLeft = async (email: string) => {
    const first = await join({ email, firstName: 'Dan' });
    expect((await t.http.post(pathOf(first.body.unsubscribeUrl))).status).toBe(200);
    expect(await statusOf(email)).toBe('unsubscribed');
    await drain();
    smtp.received.length = 0;
    signups = [];
  };

  describe("the answer's unsubscribeUrl", () => {
    it("of a repeated signup does not unsubscribe the subscriber (the issue's repro)", async () => {
      const first = await join({ email: 'ada@example.com' });
      const again = await join({ email: 'ada@example.com' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({
        success: true,
        alreadySubscribed: false,
        unsubscribeUrl: expect.stringMatching(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/`)),
      });
      expect(again.body.unsubscribeUrl).not.toBe(first.body.unsubscribeUrl);

      const token = pathOf(again.body.unsubscribeUrl).split('/').pop()!;
      expect((await t.http.post(`/unsubscribe/${token}`)).status).toBe(200);
      const key = t.http.with({ 'x-api-key': (await seedApiKey(t, app.id)).value });
      expect((await key.post(`/${app.id}/newsletter/unsubscribe/${token}`)).status).toBe(200);
      expect(await statusOf('ada@example.com')).toBe('active');
      expect((await person('ada@example.com'))!.consentHistory).toHaveLength(1);
    });

    it('of a signup stops working once that subscription has ended and another began', async () => {
      const first = await join({ email: 'bea@example.com' });
      await t.http.post(pathOf(first.body.unsubscribeUrl));
      // Back through the confirmation mail: a subscription of its own.
      await join({ email: 'bea@example.com' });
      await drain();
      // The first signup's welcome went out in the same drain, in no set order: pick the confirmation.
      const confirmations = mailsTo('bea@example.com').filter((mail) => hasConfirmLink(mail));
      expect(confirmations).toHaveLength(1);
      await t.http.post(confirmPathIn(confirmations[0]));
      expect(await statusOf('bea@example.com')).toBe('active');

      await t.http.post(pathOf(first.body.unsubscribeUrl));
      expect(await statusOf('bea@example.com')).toBe('active');
    });

    it('does not let a public signup rename a subscriber', async () => {
      await join({ email: 'cy@example.com', firstName: 'Cy' });
      await join({ email: 'cy@example.com', firstName: 'Mallory', locale: 'de' });
      expect(await person('cy@example.com')).toMatchObject({ firstName: 'Cy', locale: null });
    });
  });

  describe('a person who unsubscribed signs up again', () => {
    it('gets a confirmation mail and stays unsubscribed until the link is followed', async () => {
      await subscribedThenLeft('dan@example.com');
      const before = await person('dan@example.com');

      const res = await join({ email: 'dan@example.com', source: 'footer' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        alreadySubscribed: false,
        unsubscribeUrl: expect.stringMatching(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/`)),
      });
      const after = await person('dan@example.com');
      expect(after!.subscriptions[0].status).toBe('unsubscribed');
      expect(after!.consent.blog).toBe(false);
      expect(after!.consentHistory).toHaveLength(before!.consentHistory.length);
      expect(signups).toEqual([]);

      await drain();
      const mails = mailsTo('dan@example.com');
      expect(mails).toHaveLength(1);
      expect(mails[0].headers.subject).toMatch(/confirm/i);
      expect(confirmPathIn(mails[0])).toMatch(/^\/joinlist\/confirm\//);
      expect(await statusOf('dan@example.com')).toBe('unsubscribed');
      // The link subscribes someone: the queue holds it only sealed, never in clear.
      const token = confirmPathIn(mails[0]).split('/').pop()!;
      expect(JSON.stringify(await jobs.find().lean().exec())).not.toContain(token.split('.')[1]);
    });

    it('GET on the confirmation link shows a page with a button and changes nothing', async () => {
      await subscribedThenLeft('eve@example.com');
      await join({ email: 'eve@example.com' });
      await drain();
      const path = confirmPathIn(mailsTo('eve@example.com')[0]);

      const valid = await t.http.get(path);
      expect(valid.status).toBe(200);
      expect(valid.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(valid.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(valid.text).toContain('<form method="post" action="">');
      expect(valid.text).not.toMatch(/<script/i);
      const invalid = await t.http.get('/joinlist/confirm/not-a-token');
      expect(invalid.status).toBe(200);
      expect(invalid.text).toBe(valid.text);
      expect(await statusOf('eve@example.com')).toBe('unsubscribed');
      expect(signups).toEqual([]);
    });

    it('POST on the confirmation link subscribes with a consent event, once', async () => {
      await subscribedThenLeft('fay@example.com');
      await join({ email: 'fay@example.com', source: 'footer', referralUrl: 'https://www.shop.test/b' });
      await drain();
      const path = confirmPathIn(mailsTo('fay@example.com')[0]);

      const res = await t.http.post(path, undefined, {
        payload: '',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '10.7.7.7' },
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const fay = await person('fay@example.com');
      expect(fay!.subscriptions[0]).toMatchObject({ status: 'active', source: 'footer' });
      expect(fay!.consent.blog).toBe(true);
      expect(fay!.consentHistory.at(-1)).toMatchObject({
        category: 'blog',
        status: true,
        source: 'footer',
        appId: app.id,
        actor: 'self',
        ip: '10.7.7.7',
        referralUrl: 'https://www.shop.test/b',
      });
      expect(signups).toEqual([expect.objectContaining({ appId: app.id, email: 'fay@example.com' })]);

      const events = fay!.consentHistory.length;
      expect((await t.http.post(path)).status).toBe(200);
      expect((await person('fay@example.com'))!.consentHistory).toHaveLength(events);
      expect(signups).toHaveLength(1);
    });

    it('is mailed one confirmation a day per app, however often the address is submitted', async () => {
      await subscribedThenLeft('gus@example.com');
      for (let i = 0; i < 3; i++) expect((await join({ email: 'gus@example.com' })).status).toBe(200);
      await drain();
      expect(mailsTo('gus@example.com')).toHaveLength(1);
    });

    it('through the app backend (API key) is held for confirmation too', async () => {
      await subscribedThenLeft('hal@example.com');
      const key = t.http.with({ 'x-api-key': (await seedApiKey(t, app.id)).value });
      const res = await key.post(`/${app.id}/newsletter/subscribe`, { email: 'hal@example.com' });
      expect(res.status).toBe(201);
      // The caller learns nothing it did not send (not the stored name of a person of other apps).
      expect(res.body).toEqual({ success: true, data: { email: 'hal@example.com', firstName: null } });
      expect(await statusOf('hal@example.com')).toBe('unsubscribed');
      await drain();
      const mails = mailsTo('hal@example.com');
      expect(mails).toHaveLength(1);
      await t.http.post(confirmPathIn(mails[0]));
      expect(await statusOf('hal@example.com')).toBe('active');
      expect((await person('hal@example.com'))!.consentHistory.at(-1)).toMatchObject({ source: 'api' });
    });
  });

  it('forgets a waiting signup when the person is erased (GDPR delete)', async () => {
    await subscribedThenLeft('kim@example.com');
    await join({ email: 'kim@example.com' });
    await drain();
    const path = confirmPathIn(mailsTo('kim@example.com')[0]);
    const { admin } = await createSessions(t);
    const kim = await person('kim@example.com');
    expect((await admin.http.delete(`/admin/contacts/${String(kim!._id)}`)).status).toBe(200);
    expect(await t.connection.collection('signup_confirmations').countDocuments()).toBe(0);

    const res = await t.http.post(path);
    expect(res.text).toMatch(/no longer valid/);
    expect(await contacts.countDocuments({ deletedAt: null })).toBe(0);
  });

  describe('suppressed addresses', () => {
    it('keep their opt-out or complaint and get a confirmation link; a hard-bounced one is refused', async () => {
      const suppression = t.app.get(SuppressionService);
      await suppression.suppress({ email: 'opt@example.com', reason: 'opt_out', source: 'contacts.opt-out' });
      await suppression.suppress({ email: 'bounce@example.com', reason: 'hard_bounce', source: 'webhook' });
      await suppression.suppress({ email: 'spam@example.com', reason: 'complaint', source: 'webhook' });

      const fresh = await join({ email: 'new@example.com' });
      const bounced = await join({ email: 'bounce@example.com' });
      expect(bounced.status).toBe(422);
      expect(bounced.body).toEqual({ success: false, error: UNDELIVERABLE_ADDRESS });
      for (const email of ['opt@example.com', 'spam@example.com']) {
        const res = await join({ email });
        expect(res.status).toBe(200);
        expect(Object.keys(res.body).sort()).toEqual(Object.keys(fresh.body).sort());
        expect(res.body.alreadySubscribed).toBe(false);
        expect(await suppression.isSuppressed(email)).toBe(true);
        expect(await statusOf(email)).toBeUndefined();
      }
      expect(await statusOf('bounce@example.com')).toBeUndefined();
      await drain();
      // A confirmation is mail the person asked for: only a hard bounce stops it
      // (docs/operations/email-delivery.md "Suppression"); the subscription waits for the link.
      expect(smtp.received.map((mail) => mail.to[0]).sort()).toEqual([
        'new@example.com',
        'opt@example.com',
        'spam@example.com',
      ]);
      expect(await jobs.countDocuments({ 'result.skipped': 'suppressed' }).exec()).toBe(0);
      expect(signups.map((event) => event.email)).toEqual(['new@example.com']);
    });
  });

  describe('an app with features.doubleOptIn', () => {
    it('asks every new signup to confirm, storing no person until then', async () => {
      const strict = await seedApp(t, {
        name: 'Strict',
        allowedOrigins: [ORIGIN],
        features: { doubleOptIn: true },
      });
      const res = await join({ email: 'ida@example.com', firstName: 'Ida', locale: 'fr' }, pageOf(strict));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        alreadySubscribed: false,
        unsubscribeUrl: expect.stringMatching(new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/`)),
      });
      expect(await person('ida@example.com')).toBeNull();
      // Its link unsubscribes no one, before or after the confirmation.
      expect((await t.http.post(pathOf(res.body.unsubscribeUrl))).status).toBe(200);

      await drain();
      const mails = mailsTo('ida@example.com');
      expect(mails).toHaveLength(1);
      expect(mails[0].headers.subject).toMatch(/Strict/);
      await t.http.post(confirmPathIn(mails[0]));
      const ida = await person('ida@example.com');
      expect(ida).toMatchObject({ firstName: 'Ida', locale: 'fr', consent: { blog: true } });
      expect(ida!.subscriptions).toEqual([
        expect.objectContaining({ appId: strict.id, status: 'active', source: 'joinlist' }),
      ]);
      expect(ida!.consentHistory).toEqual([
        expect.objectContaining({ category: 'blog', status: true, source: 'joinlist', appId: strict.id }),
      ]);
      expect(signups).toEqual([expect.objectContaining({ appId: strict.id, email: 'ida@example.com' })]);

      await t.http.post(pathOf(res.body.unsubscribeUrl));
      expect(await statusOf('ida@example.com', strict.id)).toBe('active');
    });

    it('leaves the other apps single opt-in', async () => {
      await join({ email: 'jo@example.com' });
      expect(await statusOf('jo@example.com')).toBe('active');
    });
  });
});
