import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { Contact } from '../src/contacts/schemas/contact.schema';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { type ReceivedMail, TestSmtpServer } from './helpers/smtp';
import { useMailApp } from './helpers/mail-app';

const decoded = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;

/**
 * Found in a review: an end-user token outlived the person's GDPR erasure and carried their address.
 * Tokens now name the person record and its token version, which an erasure bumps.
 */
describe('End-user tokens and GDPR erasure', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let contacts: Model<Contact>;
  let admin: Session;
  let appId: string;
  let backend: TestApp['http'];
  let wantId: string;
  let client = 0;
  const fresh = () => ({ headers: { 'x-forwarded-for': `10.24.11.${(client += 1) % 250}` } });

  const mailApp = useMailApp();
  beforeAll(() => {
    ({ t, smtp } = mailApp);
    contacts = t.app.get<Model<Contact>>(getModelToken(Contact.name));
  });
  beforeEach(async () => {
    admin = await createSession(t);
    appId = (await seedApp(t)).id;
    backend = t.http.with({ 'x-api-key': (await seedApiKey(t, appId)).value });
    const created = await backend.post(`/${appId}/wants`, {
      title: 'Dark mode',
      description: 'Please',
      category: 'ui',
    });
    expect(created.status).toBe(201);
    wantId = created.body.data._id as string;
  });

  /** Signs the address in through the magic link, as the person would. */
  async function signIn(email: string): Promise<{ token: string; user: { id: string; email: string } }> {
    expect((await t.http.post('/auth/magic-link', { email, appId }, fresh())).status).toBe(200);
    await t.app.get(MagicLinkService).idle();
    await drainEmailQueue(t);
    const mail = smtp.received.filter((received) => received.to.includes(email)).pop()!;
    const token = /token=([A-Za-z0-9_-]{43})/.exec(decoded(mail))![1];
    const res = await t.http.post('/auth/magic-link/verify', { token }, fresh());
    expect(res.status).toBe(200);
    return res.body as { token: string; user: { id: string; email: string } };
  }

  const vote = (token: string) =>
    backend
      .with({ authorization: `Bearer ${token}` })
      .post(`/${appId}/wants/${wantId}/vote`, undefined, fresh());

  it('refuses a token issued before the erasure (401) on the next request', async () => {
    const { token, user } = await signIn('ada@example.com');
    expect((await vote(token)).status).toBe(200);

    expect((await admin.http.delete(`/admin/contacts/${user.id}`)).status).toBe(200);

    const after = await vote(token);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ success: false, error: 'Invalid or expired token' });
    const stored = await contacts.findById(user.id).lean<Contact>().orFail().exec();
    expect(stored.tokenVersion).toBe(1);
  });

  it('keeps tokens of other people working', async () => {
    const ada = await signIn('ada@example.com');
    const bob = await signIn('bob@example.com');
    expect((await admin.http.delete(`/admin/contacts/${ada.user.id}`)).status).toBe(200);
    expect((await vote(bob.token)).status).toBe(200);
  });

  it('carries the person id and token version in the JWT, never the address', async () => {
    const { token, user } = await signIn('ada@example.com');
    expect(user.email).toBe('ada@example.com');
    const claims = claimsOf(token);
    expect(claims).toMatchObject({ sub: user.id, appId, aud: 'end-user', tv: 0 });
    expect(claims).not.toHaveProperty('email');
    expect(JSON.stringify(claims)).not.toContain('ada@example.com');
    expect(JSON.stringify(claims)).not.toContain('@');
  });
});
