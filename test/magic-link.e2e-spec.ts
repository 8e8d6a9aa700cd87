import { getModelToken } from '@nestjs/mongoose';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { createHmac, randomBytes } from 'node:crypto';
import type { Model } from 'mongoose';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { MagicLinkToken } from '../src/auth/magic-link/schemas/magic-link-token.schema';
import { LinkTokens } from '../src/common/crypto/link-token';
import { SecretKeys } from '../src/config/secret-keys';
import { ContactsService } from '../src/contacts/contacts.service';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { UNDELIVERABLE_ADDRESS } from '../src/email/suppression/undeliverable-address';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { drainEmailQueue } from './helpers/email-queue';
import { TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import type { RequestOptions } from './helpers/http';
import { createSession, Session } from './helpers/session';
import { type ReceivedMail, TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const SIGN_IN_PAGE = 'https://shop.example.com/sign-in?from=mail';

/** The text of a received message with quoted-printable soft breaks and escapes undone. */
const decoded = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The sign-in link of a message (its text part comes first). */
function linkIn(mail: ReceivedMail): URL {
  const found = /https?:\/\/[^\s"<>]*token=[A-Za-z0-9_-]{43}/.exec(decoded(mail));
  if (!found) throw new Error(`no sign-in link in:\n${mail.raw}`);
  return new URL(found[0]);
}

describe('Magic link (end-user sign-in)', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let service: MagicLinkService;
  let jobs: Model<EmailJob>;
  let links: Model<MagicLinkToken>;
  let contacts: Model<Contact>;
  let admin: Session;
  let appId: string;
  let apiKey: string;

  const mailApp = useMailApp({
    env: {
      MAIL_FROM: 'Admin Service <no-reply@mail.example.com>',
      PUBLIC_BASE_URL: 'https://api.example.com',
    },
  });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    service = t.app.get(MagicLinkService);
    jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    links = t.app.get<Model<MagicLinkToken>>(getModelToken(MagicLinkToken.name));
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
  });
  beforeEach(async () => {
    admin = await createSession(t);
    appId = (await seedApp(t, { name: 'Shop', features: { magicLinkUrl: SIGN_IN_PAGE } })).id;
    apiKey = (await seedApiKey(t, appId)).value;
  });

  let client = 0;
  /** A client address of its own per call, so only the tests about the per-IP limit meet it. */
  const fresh = (options: RequestOptions = {}): RequestOptions => ({
    ...options,
    headers: { 'x-forwarded-for': `10.13.${(client += 1) >> 8}.${client % 256}`, ...options.headers },
  });

  /** Asks for a link and waits until the service has queued its mail (that part runs after the response). */
  async function requestLink(email: string, forApp = appId, options: RequestOptions = fresh()) {
    const res = await t.http.post('/auth/magic-link', { email, appId: forApp }, options);
    await service.idle();
    return res;
  }

  const drain = () => drainEmailQueue(t);

  /** Mail is addressed to the person record's address: lower-cased. */
  const mailsTo = (email: string) => smtp.received.filter((mail) => mail.to.includes(email.toLowerCase()));

  /** The token of a fresh link for this address, as the person would take it from the e-mail. */
  async function tokenFor(email: string, forApp = appId): Promise<string> {
    const before = mailsTo(email).length;
    expect((await requestLink(email, forApp)).status).toBe(200);
    await drain();
    const mails = mailsTo(email);
    expect(mails).toHaveLength(before + 1);
    return linkIn(mails[mails.length - 1]).searchParams.get('token')!;
  }

  const verify = (token: unknown) => t.http.post('/auth/magic-link/verify', { token }, fresh());

  async function signIn(email: string, forApp = appId): Promise<string> {
    const res = await verify(await tokenFor(email, forApp));
    expect(res.status).toBe(200);
    return res.body.token as string;
  }

  describe('POST /auth/magic-link', () => {
    it("mails a link to the app's sign-in page, before campaign mail in the queue", async () => {
      const res = await requestLink('ada@example.com');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: expect.any(String) });

      const [job] = await jobs.find().lean<EmailJob[]>().exec();
      expect(job).toMatchObject({ type: 'email.send', appId, priority: 100 });
      expect(job.idempotencyKey).toMatch(/^magic-link:[0-9a-f]{24}$/);

      await drain();
      const [mail] = mailsTo('ada@example.com');
      expect(mail.headers.subject).toBe('Your sign-in link for Shop');
      const link = linkIn(mail);
      expect(`${link.origin}${link.pathname}`).toBe('https://shop.example.com/sign-in');
      expect(link.searchParams.get('from')).toBe('mail');
      expect(link.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('answers an unknown and a known address alike, and signs up the unknown one without any consent', async () => {
      await t.app.get(ContactsService).signUp({ appId, email: 'known@example.com', source: 'joinlist' });
      const known = await requestLink('known@example.com');
      const unknown = await requestLink('unknown@example.com');
      expect(unknown.status).toBe(known.status);
      expect(unknown.body).toEqual(known.body);
      expect(unknown.text).toBe(known.text);

      const created = await contacts.findOne({ email: 'unknown@example.com' }).lean<Contact>().exec();
      expect(created?.consent).toEqual({ outreach: null, commercial: null, blog: null });
      expect(created?.consentHistory).toEqual([]);
      expect(created?.subscriptions).toEqual([]);
      await drain();
      expect(mailsTo('known@example.com')).toHaveLength(1);
      expect(mailsTo('unknown@example.com')).toHaveLength(1);
    });

    it('stores the token only as its HMAC with the magic-link key, with a 15-minute expiry', async () => {
      const token = await tokenFor('ada@example.com');
      const stored = await links.find().lean<MagicLinkToken[]>().exec();
      expect(stored).toHaveLength(1);
      const expected = createHmac('sha256', t.app.get(SecretKeys).magicLink).update(token).digest('hex');
      expect(stored[0]).toMatchObject({ tokenHash: expected, appId, usedAt: null });
      expect(JSON.stringify(stored)).not.toContain(token);
      const lifetime = stored[0].expiresAt.getTime() - stored[0].createdAt.getTime();
      expect(lifetime).toBeGreaterThan(14.9 * 60_000);
      expect(lifetime).toBeLessThanOrEqual(15 * 60_000 + 1_000);
      const indexes = await links.collection.indexes();
      expect(indexes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ key: { tokenHash: 1 }, unique: true }),
          expect.objectContaining({ key: { expiresAt: 1 }, expireAfterSeconds: 0 }),
        ]),
      );
    });

    it("uses the app's magic-link template when it has one", async () => {
      const created = await admin.http.post('/admin/templates', {
        appId,
        name: 'magic-link',
        language: 'en',
        subject: 'Sign in to {{appName}}',
        htmlTemplate: '<p><a href="{{link}}">Here</a> ({{expiresInMinutes}} min, {{email}})</p>',
        textTemplate: 'Here: {{link}} ({{expiresInMinutes}} min, {{email}})',
        variables: ['link', 'appName', 'email', 'expiresInMinutes'],
      });
      expect(created.status).toBe(200);
      await requestLink('ada@example.com');
      await drain();
      const [mail] = mailsTo('ada@example.com');
      expect(mail.headers.subject).toBe('Sign in to Shop');
      expect(decoded(mail)).toContain('(15 min, ada@example.com)');
      expect(linkIn(mail).searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('escapes the app name in the built-in HTML', async () => {
      const other = await seedApp(t, { name: 'Tom & <b>Jerry</b>' });
      await requestLink('ada@example.com', other.id);
      await drain();
      const html = decoded(mailsTo('ada@example.com')[0]).split('Content-Type: text/html')[1];
      expect(html).toContain('Tom &amp; &lt;b&gt;Jerry&lt;/b&gt;');
      expect(html).not.toContain('<b>Jerry</b>');
    });

    it('points the link at the first exact allowed origin when the app has no magicLinkUrl, else at PUBLIC_BASE_URL', async () => {
      const withOrigins = await seedApp(t, {
        allowedOrigins: ['*.example.com', 'https://front.example.com'],
      });
      const bare = await seedApp(t);
      await requestLink('one@example.com', withOrigins.id);
      await requestLink('two@example.com', bare.id);
      await drain();
      expect(linkIn(mailsTo('one@example.com')[0]).href).toMatch(/^https:\/\/front\.example\.com\/\?token=/);
      expect(linkIn(mailsTo('two@example.com')[0]).href).toMatch(/^https:\/\/api\.example\.com\/\?token=/);
    });

    it('answers 422 for an address that hard-bounced, and queues nothing', async () => {
      await t.app
        .get(SuppressionService)
        .suppress({ email: 'gone@example.com', reason: 'hard_bounce', source: 'test' });
      const res = await requestLink('gone@example.com');
      expect(res.status).toBe(422);
      expect(res.body.error).toBe(UNDELIVERABLE_ADDRESS);
      await drain();
      expect(mailsTo('gone@example.com')).toEqual([]);
      expect(await jobs.countDocuments().exec()).toBe(0);
    });

    it('answers 404 for an unknown or inactive app (without saying which) and sends nothing', async () => {
      const inactive = await seedApp(t, { active: false });
      for (const id of ['no-such-app', inactive.id]) {
        const res = await requestLink('ada@example.com', id);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: 'App not found' });
      }
      expect(await jobs.countDocuments().exec()).toBe(0);
      expect(await contacts.countDocuments().exec()).toBe(0);
    });

    it.each([
      [{ appId: 'shop' }, /email/],
      [{ email: 'not-an-address', appId: 'shop' }, /email must be an email/],
      [{ email: 'ada@example.com' }, /appId/],
      [{ email: 'ada@example.com', appId: 'Not An Id' }, /appId must be an app id/],
      [{ email: 'ada@example.com', appId: 'shop', extra: 1 }, /property extra should not exist/],
    ])('answers 400 naming the field for %p', async (body, message) => {
      const res = await t.http.post('/auth/magic-link', body, fresh());
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('answers at the trailing-slash path the spec writes', async () => {
      const res = await t.http.post('/auth/magic-link/', { email: 'ada@example.com', appId }, fresh());
      expect(res.status).toBe(200);
      await service.idle();
    });

    it('limits one client IP to 5 requests a minute (429 with Retry-After)', async () => {
      const sameClient = fresh();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        statuses.push((await requestLink(`person${i}@example.com`, appId, sameClient)).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      expect(
        Number((await requestLink('late@example.com', appId, sameClient)).headers['retry-after']),
      ).toBeGreaterThan(0);
      expect((await requestLink('other-client@example.com')).status).toBe(200);
    });

    it('sends at most 3 links per address and app in 15 minutes, from any IP, then answers the same 200 and sends nothing', async () => {
      const answers = [];
      for (const spelling of ['ada@example.com', 'Ada@Example.com', 'ADA@example.com', 'ada@EXAMPLE.com']) {
        answers.push(await requestLink(spelling));
      }
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
      expect(new Set(answers.map((res) => res.text)).size).toBe(1);
      expect(await links.countDocuments().exec()).toBe(3);
      expect(await jobs.countDocuments().exec()).toBe(3);

      // Another address, and the same address for another app, have budgets of their own.
      const otherApp = await seedApp(t);
      await requestLink('bob@example.com');
      await requestLink('ada@example.com', otherApp.id);
      expect(await jobs.countDocuments().exec()).toBe(5);
    });

    it("keys the per-address counter by an HMAC: the limiter's storage never holds the address", async () => {
      await requestLink('ada@example.com');
      const storage = t.app.get<ThrottlerStorageService>(ThrottlerStorage);
      const keys = [...storage.storage.keys()];
      expect(keys.some((key) => key.startsWith('magic-link-address:'))).toBe(true);
      // Hex digests cannot hold `@` or the domain; the address in any spelling would.
      expect(keys.filter((key) => /@|example/i.test(key))).toEqual([]);
    });
  });

  describe('POST /auth/magic-link/verify', () => {
    it('exchanges the token for an end-user token of the person and the app (shaped like login)', async () => {
      const token = await tokenFor('Ada@Example.com');
      const res = await verify(token);
      expect(res.status).toBe(200);
      const person = await contacts.findOne({ email: 'ada@example.com' }).lean<Contact>().orFail().exec();
      expect(res.body).toEqual({
        success: true,
        token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        user: { id: String(person._id), email: 'ada@example.com', appId },
      });
      const claims = JSON.parse(Buffer.from(res.body.token.split('.')[1], 'base64url').toString()) as {
        aud: string;
        sub: string;
        appId: string;
      };
      expect(claims).toMatchObject({ aud: 'end-user', sub: String(person._id), appId });
      const stored = await links.findOne().lean<MagicLinkToken>().orFail().exec();
      expect(stored.usedAt).toBeInstanceOf(Date);
    });

    it('gives a token the back-office routes refuse', async () => {
      const endUserToken = await signIn('ada@example.com');
      for (const url of ['/auth/me', '/users', '/admin/apps', `/admin/${appId}/wants`]) {
        const res = await t.http.get(url, fresh({ headers: { authorization: `Bearer ${endUserToken}` } }));
        expect({ url, status: res.status }).toEqual({ url, status: 401 });
      }
    });

    it('signs in once: a second verify of the same link is a 401', async () => {
      const token = await tokenFor('ada@example.com');
      expect((await verify(token)).status).toBe(200);
      const again = await verify(token);
      expect(again.status).toBe(401);
      expect(again.body).toEqual({ success: false, error: 'This sign-in link is invalid, used or expired' });
    });

    it('lets exactly one of several concurrent verifies of one link succeed', async () => {
      const token = await tokenFor('ada@example.com');
      const answers = await Promise.all(Array.from({ length: 5 }, () => verify(token)));
      expect(answers.map((res) => res.status).sort()).toEqual([200, 401, 401, 401, 401]);
    });

    it('refuses an expired link (401)', async () => {
      const token = await tokenFor('ada@example.com');
      await links.updateMany({}, { $set: { expiresAt: new Date(Date.now() - 1_000) } }).exec();
      expect((await verify(token)).status).toBe(401);
    });

    it('refuses forged and malformed tokens (401)', async () => {
      await tokenFor('ada@example.com');
      for (const token of [
        randomBytes(32).toString('base64url'),
        'short',
        `${randomBytes(32).toString('base64url')}=`,
        '../../etc/passwd',
      ]) {
        const res = await verify(token);
        expect({ token, status: res.status }).toEqual({ token, status: 401 });
      }
    });

    it('refuses tokens of other purposes: an unsubscribe link token, a back-office or an end-user bearer token', async () => {
      const endUserToken = await signIn('ada@example.com');
      const person = await contacts.findOne().lean<Contact>().orFail().exec();
      const unsubscribe = t.app.get(LinkTokens).sign('unsubscribe', [String(person._id), appId]);
      for (const token of [unsubscribe, admin.token, endUserToken]) {
        expect((await verify(token)).status).toBe(401);
      }
    });

    it.each([
      ['no token', {}],
      ['an empty token', { token: '' }],
      ['a number', { token: 42 }],
      ['null', { token: null }],
      ['a token over 512 characters', { token: 'x'.repeat(513) }],
    ])('answers 400 to a body with %s', async (_label, body) => {
      const res = await t.http.post('/auth/magic-link/verify', body, fresh());
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/token/);
    });

    it('answers 403 when the app was switched off after the link was sent', async () => {
      const token = await tokenFor('ada@example.com');
      expect((await admin.http.post(`/admin/apps/${appId}/toggle`)).body.data.active).toBe(false);
      const res = await verify(token);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('This app is inactive');
    });
  });

  describe('the end-user token on the wants routes (the voter)', () => {
    let backend: TestApp['http'];
    let wantId: string;

    beforeEach(async () => {
      backend = t.http.with({ 'x-api-key': apiKey });
      const created = await backend.post(`/${appId}/wants`, {
        title: 'Dark mode',
        description: 'Please',
        category: 'ui',
      });
      expect(created.status).toBe(201);
      wantId = created.body.data._id as string;
    });

    const asPerson = (token: string, extra: Record<string, string> = {}) =>
      backend.with({ authorization: `Bearer ${token}`, ...extra });

    it('counts the signed-in person as a voter of their own, distinct from X-User-Id and the IP', async () => {
      const token = await signIn('ada@example.com');
      const vote = (http: TestApp['http']) => http.post(`/${appId}/wants/${wantId}/vote`, undefined, fresh());

      expect((await vote(backend.with({ 'x-user-id': 'u1' }))).body.data).toEqual({
        voteCount: 1,
        hasVoted: true,
      });
      expect((await vote(backend)).body.data).toEqual({ voteCount: 2, hasVoted: true });
      // The token wins over X-User-Id: this is the person's vote, not u1's second one.
      const personVote = await vote(asPerson(token, { 'x-user-id': 'u1' }));
      expect(personVote.status).toBe(200);
      expect(personVote.body.data).toEqual({ voteCount: 3, hasVoted: true });

      const seen = await asPerson(token).get(`/${appId}/wants/${wantId}`);
      expect(seen.body.data.hasVoted).toBe(true);
      const listed = await asPerson(token).get(`/${appId}/wants`);
      expect(listed.body.data[0].hasVoted).toBe(true);
      // Voting again takes the person's vote back.
      expect((await vote(asPerson(token))).body.data).toEqual({ voteCount: 2, hasVoted: false });
    });

    it("refuses a token of another app on this app's routes (403)", async () => {
      const otherApp = await seedApp(t);
      const token = await signIn('ada@example.com', otherApp.id);
      const res = await asPerson(token).post(`/${appId}/wants/${wantId}/vote`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, error: 'This token belongs to another app' });
    });

    it('refuses a bad token instead of ignoring it (401)', async () => {
      const forged = `${(await signIn('ada@example.com')).slice(0, -4)}AAAA`;
      // A back-office token is passed over instead (test/client-document.e2e-spec.ts).
      for (const authorization of [`Bearer ${forged}`, 'Bearer not-a-token', 'Basic dXNlcjpwYXNz']) {
        const res = await backend
          .with({ authorization })
          .post(`/${appId}/wants/${wantId}/vote`, undefined, fresh());
        expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
      }
      const want = await backend.get(`/${appId}/wants/${wantId}`);
      expect(want.body.data.voteCount).toBe(0);
    });

    it('still needs the API key: an end-user token alone is a 401', async () => {
      const token = await signIn('ada@example.com');
      const res = await t.http.post(`/${appId}/wants/${wantId}/vote`, undefined, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('Missing X-API-Key header');
    });
  });
});
