import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { App } from '../src/apps/schemas/app.schema';
import { type Contact } from '../src/contacts/schemas/contact.schema';
import { SignupConfirmation } from '../src/contacts/signup/signup-confirmation.schema';
import { SuppressionService } from '../src/email/suppression/suppression.service';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import type { HttpClient } from './helpers/http';
import { type ReceivedMail, TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const ORIGIN = 'https://www.shop.test';
const PUBLIC_BASE_URL = 'https://admin.example.test';
const DAY_MS = 86_400_000;

/** The text of a received message with quoted-printable soft breaks and escapes undone. */
const decoded = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

const confirmPathIn = (mail: ReceivedMail): string => {
  const found = new RegExp(`${PUBLIC_BASE_URL}(/joinlist/confirm/[A-Za-z0-9_.-]+)`).exec(decoded(mail));
  if (!found) throw new Error(`no confirmation link in:\n${mail.raw}`);
  return found[1];
};

/** What a public caller can read in an answer's unsubscribe token: each segment, base64url-decoded. */
const readableParts = (url: string) =>
  new URL(url).pathname
    .split('/')
    .pop()!
    .split('.')
    .map((segment) => Buffer.from(segment, 'base64url'));

describe('Public answers reveal nothing about other people', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let app: App;
  let contacts: Model<Contact>;
  let pending: Model<SignupConfirmation>;
  let client = 0;

  const mailApp = useMailApp({ env: { PUBLIC_BASE_URL } });
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    contacts = t.app.get<Model<Contact>>(getModelToken('Contact'));
    pending = t.app.get<Model<SignupConfirmation>>(getModelToken(SignupConfirmation.name));
  });
  beforeEach(async () => {
    app = await seedApp(t, { name: 'Shop', allowedOrigins: [ORIGIN] });
  });

  /** Each request from a client IP of its own: the joinlist's per-IP limit is not what these tests test. */
  const pageOf = (forApp: App): HttpClient => {
    client += 1;
    return t.http.with({
      'x-app-key': forApp.publicKey,
      origin: ORIGIN,
      'x-forwarded-for': `10.33.${client >> 8}.${client & 255}`,
    });
  };
  const join = (body: Record<string, unknown>, forApp = app) => pageOf(forApp).post('/joinlist', body);
  const mailsTo = (email: string) => smtp.received.filter((mail) => mail.to.includes(email));

  describe('the joinlist answer', () => {
    it('is alike for an unknown, known, subscribed and opted-out address, naming no record', async () => {
      const other = await seedApp(t, { allowedOrigins: [ORIGIN] });
      await join({ email: 'known@example.com' }, other);
      await join({ email: 'subscribed@example.com' });
      const left = await join({ email: 'left@example.com' });
      await t.http.post(new URL(String(left.body.unsubscribeUrl)).pathname);
      await join({ email: 'optout@example.com' }, other);
      await t.app.get(SuppressionService).suppress({
        email: 'optout@example.com',
        reason: 'opt_out',
        source: 'contacts.opt-out',
      });
      const ids = (await contacts.find().lean<Contact[]>().exec()).map((c) => c._id.toHexString());
      expect(ids).toHaveLength(4);

      const addresses = [
        'new@example.com',
        'known@example.com',
        'subscribed@example.com',
        'left@example.com',
      ];
      const answers = [];
      for (const email of [...addresses, 'optout@example.com']) answers.push(await join({ email }));
      const tokenLengths = new Set<number>();
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({
          success: true,
          alreadySubscribed: false,
          unsubscribeUrl: expect.stringMatching(
            new RegExp(`^${PUBLIC_BASE_URL}/unsubscribe/[A-Za-z0-9_-]+$`),
          ),
        });
        const url = String(answer.body.unsubscribeUrl);
        tokenLengths.add(url.length);
        for (const part of readableParts(url)) {
          for (const id of ids) {
            expect(part.toString('latin1')).not.toContain(id);
            expect(part.includes(Buffer.from(id, 'hex'))).toBe(false);
          }
        }
      }
      expect([...tokenLengths]).toHaveLength(1);
    });

    it("still ends the subscription that request started, and nobody else's", async () => {
      const first = await join({ email: 'ada@example.com' });
      const repeat = await join({ email: 'ada@example.com' });
      await t.http.post(new URL(String(repeat.body.unsubscribeUrl)).pathname);
      const status = async () =>
        (await contacts.findOne({ email: 'ada@example.com' }).lean<Contact>().exec())!.subscriptions[0]
          .status;
      expect(await status()).toBe('active');
      await t.http.post(new URL(String(first.body.unsubscribeUrl)).pathname);
      expect(await status()).toBe('unsubscribed');
    });
  });

  describe('names in mail', () => {
    it.each([
      'www.shop-prizes.example',
      'Visit https://evil.example',
      'prizes.example',
      'Ada\r\nClaim your prize',
      'ada@evil.example',
      'evil/claim',
    ])('refuses the first name %j (400 naming firstName), storing nothing', async (firstName) => {
      const res = await join({ email: 'ada@example.com', firstName });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(/firstName/) as string });
      expect(await contacts.countDocuments()).toBe(0);
    });

    it('takes ordinary names, initials included', async () => {
      for (const firstName of ['J. R. R.', "Zoë O'Neil-Ng", 'José María', '李小龍']) {
        expect((await join({ email: `n${client}@example.com`, firstName })).status).toBe(200);
      }
    });

    it('leaves a stored name that could be read as a link out of both parts of the welcome', async () => {
      // Stored before the joinlist refused such names (or by another route).
      await contacts.create({ email: 'bea@example.com', firstName: 'Go to prizes.example\r\nnow' });
      expect((await join({ email: 'bea@example.com' })).status).toBe(200);
      await drainEmailQueue(t);
      const [welcome] = mailsTo('bea@example.com');
      expect(decoded(welcome)).not.toMatch(/prizes|Go to/);
      expect(decoded(welcome)).toContain('Hello,');
    });
  });

  describe('a confirmation link', () => {
    it('never lives past 7 days from its first mail, however often the signup is repeated', async () => {
      const optIn = await seedApp(t, { allowedOrigins: [ORIGIN], features: { doubleOptIn: true } });
      await join({ email: 'cy@example.com' }, optIn);
      await drainEmailQueue(t);
      const first = await pending.findOne({ appId: optIn.id }).lean<SignupConfirmation>().exec();
      const firstIssue = first!.mailedAt.getTime();
      expect(first!.expiresAt.getTime()).toBeLessThanOrEqual(firstIssue + 7 * DAY_MS + 1_000);

      // Six days on (the stored times moved back), the address comes again: mailed again, not extended.
      await pending.updateOne(
        { appId: optIn.id },
        {
          $set: {
            mailedAt: new Date(firstIssue - 6 * DAY_MS),
            expiresAt: new Date(first!.expiresAt.getTime() - 6 * DAY_MS),
          },
        },
      );
      await join({ email: 'cy@example.com' }, optIn);
      await drainEmailQueue(t);
      expect(mailsTo('cy@example.com')).toHaveLength(2);
      const again = await pending.findOne({ appId: optIn.id }).lean<SignupConfirmation>().exec();
      expect(again!.expiresAt.getTime()).toBe(first!.expiresAt.getTime() - 6 * DAY_MS);
      const link = confirmPathIn(mailsTo('cy@example.com')[1]);
      expect(link).toBe(confirmPathIn(mailsTo('cy@example.com')[0]));

      // A day later, the link has lived its 7 days: it subscribes no one, and a new signup mails a new one.
      await pending.updateOne(
        { appId: optIn.id },
        { $set: { mailedAt: new Date(Date.now() - 2 * DAY_MS), expiresAt: new Date(Date.now() - 1_000) } },
      );
      await t.http.post(link);
      expect(await contacts.countDocuments({ email: 'cy@example.com' })).toBe(0);
      await join({ email: 'cy@example.com' }, optIn);
      await drainEmailQueue(t);
      const fresh = confirmPathIn(mailsTo('cy@example.com')[2]);
      expect(fresh).not.toBe(link);
      await t.http.post(fresh);
      const cy = await contacts.findOne({ email: 'cy@example.com' }).lean<Contact>().exec();
      expect(cy!.subscriptions).toEqual([expect.objectContaining({ appId: optIn.id, status: 'active' })]);
    });
  });
});
