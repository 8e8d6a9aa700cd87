import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { EndUserTokenService } from '../src/auth/end-user/end-user-token.service';
import { Role } from '../src/common/auth/roles';
import { ContactsService } from '../src/contacts/contacts.service';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { GuardsProbeModule } from './helpers/guards-probe.module';
import { createSession, Session } from './helpers/session';

/**
 * The end-user token and the provider webhook signature through the real pipeline: the global
 * CredentialGuard runs their strategies' checks on test-only routes (test/helpers/guards-probe.module.ts).
 */
describe('End-user and webhook credentials', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  let t: TestApp;
  let admin: Session;
  let endUserToken: (appId: string) => Promise<string>;
  let personId: string;

  beforeAll(async () => {
    process.env.WEBHOOK_SECRET = secret;
    t = await createTestApp({ imports: [GuardsProbeModule] });
    admin = await createSession(t, Role.Admin);
    // The strategy checks the person's record: the token must name one that exists.
    personId = String((await t.app.get(ContactsService).findOrCreate('ada@example.com'))._id);
    endUserToken = (appId) => t.app.get(EndUserTokenService).sign({ id: personId, appId }, 0);
  });
  afterAll(async () => {
    delete process.env.WEBHOOK_SECRET;
    await t.close();
  });

  describe('@EndUser()', () => {
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

    it("exposes the person and app of a valid token, also on its own app's routes", async () => {
      const app = await seedApp(t);
      const token = await endUserToken(app.id);
      const res = await t.http.get('/__guards/end-user', bearer(token));
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: personId, appId: app.id });
      expect((await t.http.get(`/__guards/${app.id}/end-user`, bearer(token))).status).toBe(200);
    });

    it("answers 403 on another app's route", async () => {
      const res = await t.http.get('/__guards/other-app/end-user', bearer(await endUserToken('shop')));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, error: 'This token belongs to another app' });
    });

    it('answers 401 without a token, and to a back-office token', async () => {
      const missing = await t.http.get('/__guards/end-user');
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ success: false, error: 'Missing X-End-User-Token header' });
      const backOffice = await admin.http.get('/__guards/end-user');
      expect(backOffice.status).toBe(401);
      expect(backOffice.body.error).toBe('Invalid or expired token');
    });

    it('is never accepted on back-office routes', async () => {
      const token = await endUserToken('shop');
      for (const url of ['/auth/me', '/users', '/admin/apps']) {
        expect((await t.http.get(url, bearer(token))).status).toBe(401);
      }
    });
  });

  describe('@WebhookSignature()', () => {
    const body = JSON.stringify({ type: 'email.delivered', data: { email_id: 'm-1@mail.test' } });
    const send = (payload: string, headers: Record<string, string>) =>
      t.http.post('/__guards/webhook', undefined, {
        payload,
        headers: { 'content-type': 'application/json', ...headers },
      });
    const signed = (payload: string, { key = secret, prefix = 'webhook', sentAt = new Date() } = {}) => ({
      [`${prefix}-id`]: 'msg_1',
      [`${prefix}-timestamp`]: String(Math.floor(sentAt.getTime() / 1000)),
      [`${prefix}-signature`]: new Webhook(key).sign('msg_1', sentAt, payload),
    });

    it('accepts a body signed with WEBHOOK_SECRET and hands the handler the verified message', async () => {
      const res = await send(body, signed(body));
      expect(res.status).toBe(200);
      // The configured format (Resend) has read the verified body into its deliveries.
      expect(res.body.data).toMatchObject({
        deliveries: [{ id: 'msg_1', read: { event: { messageId: 'm-1@mail.test', type: 'delivered' } } }],
      });
    });

    it('accepts svix-* headers', async () => {
      expect((await send(body, signed(body, { prefix: 'svix' }))).status).toBe(200);
    });

    it.each([
      ['unsigned', () => ({})],
      [
        'signed with another secret',
        () => signed(body, { key: `whsec_${randomBytes(24).toString('base64')}` }),
      ],
      ['stale', () => signed(body, { sentAt: new Date(Date.now() - 6 * 60_000) })],
      ['altered after signing', () => signed(body.replace('delivered', 'bounced'))],
    ])('answers 401 when the body is %s', async (_label, headers) => {
      const res = await send(body, headers());
      expect(res.status).toBe(401);
      expect(res.body.success).toBe(false);
    });

    it('is not satisfied by a back-office token', async () => {
      const res = await admin.http.post('/__guards/webhook', JSON.parse(body));
      expect(res.status).toBe(401);
    });
  });
});
