import { createHmac } from 'node:crypto';
import { BACK_OFFICE_AUDIENCE, TOKEN_ISSUER } from '../src/auth/token.service';
import { Role } from '../src/common/auth/roles';
import { deriveKey } from '../src/common/crypto/derive-key';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { createSession, Session, TEST_PASSWORD } from './helpers/session';

const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function forge(header: object, payload: object, key: Buffer | string): string {
  const unsigned = `${b64url(header)}.${b64url(payload)}`;
  return `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
}

describe('Auth', () => {
  let t: TestApp;
  let admin: Session;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    admin = await createSession(t, Role.Admin);
  });

  const login = (email: string, password: string, ip = '198.51.100.1') =>
    t.http.post('/auth/login', { email, password }, { headers: { 'x-forwarded-for': ip } });

  describe('POST /auth/login', () => {
    it('returns a token and the team user, and records the login', async () => {
      const res = await login(admin.user.email, TEST_PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        user: {
          id: admin.user.id,
          email: admin.user.email,
          name: expect.stringMatching(/^Test admin/),
          role: 'admin',
        },
      });
      const me = await t.http.get('/auth/me', { headers: { authorization: `Bearer ${res.body.token}` } });
      expect(me.body.user.id).toBe(admin.user.id);
      const stored = await admin.http.get(`/users/${admin.user.id}`);
      expect(stored.body.data.loginCount).toBe(1);
      expect(stored.body.data.lastLoginAt).toEqual(expect.any(String));
    });

    it('accepts the e-mail in another case', async () => {
      expect((await login(admin.user.email.toUpperCase(), TEST_PASSWORD)).status).toBe(200);
    });

    it('answers 401 with one message for an unknown e-mail, a wrong password and an inactive user', async () => {
      const inactive = await createSession(t, Role.User, { isActive: false });
      const unknown = await login('nobody@example.com', TEST_PASSWORD);
      const wrong = await login(admin.user.email, 'wrong-password');
      const deactivated = await login(inactive.user.email, TEST_PASSWORD);
      for (const res of [unknown, wrong, deactivated]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, error: 'Invalid e-mail or password' });
      }
    });

    it.each([
      [{ password: 'x' }, /email/],
      [{ email: 'not-an-email', password: 'x' }, /email/],
      [{ email: 'a@example.com' }, /password/],
      [{ email: { $gt: '' }, password: { $gt: '' } }, /email/],
      [{ email: 'a@example.com', password: 'x', role: 'admin' }, /role should not exist/],
    ])('answers 400 for %p', async (body, message) => {
      const res = await t.http.post('/auth/login', body, { headers: { 'x-forwarded-for': '198.51.100.2' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('throttles login per client IP: the 11th attempt in a minute answers 429', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i += 1)
        statuses.push((await login('x@example.com', 'nope', '192.0.2.77')).status);
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses[10]).toBe(429);
      // Another IP is not affected.
      expect((await login('x@example.com', 'nope', '192.0.2.78')).status).toBe(401);
    });
  });

  describe('POST /auth/refresh and GET /auth/me', () => {
    it('refresh returns a fresh working token and the user', async () => {
      const res = await admin.http.post('/auth/refresh');
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: admin.user.id, role: 'admin' });
      const me = await t.http.get('/auth/me', { headers: { authorization: `Bearer ${res.body.token}` } });
      expect(me.status).toBe(200);
      expect(me.body).toEqual({ success: true, user: expect.objectContaining({ email: admin.user.email }) });
    });

    it('both answer 401 without a token', async () => {
      expect((await t.http.post('/auth/refresh')).status).toBe(401);
      expect((await t.http.get('/auth/me')).status).toBe(401);
    });
  });

  describe('forged and stale tokens', () => {
    const secret = () => deriveKey(process.env.APP_SECRET!, 'jwt');
    const claims = () => ({
      sub: admin.user.id,
      role: 'admin',
      tv: 0,
      iss: TOKEN_ISSUER,
      aud: BACK_OFFICE_AUDIENCE,
      iat: now(),
      exp: now() + 600,
    });
    const expect401 = async (token: string) => {
      const res = await t.http.get('/auth/me', { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      expect(res.body.success).toBe(false);
    };

    it('accepts a correctly forged token (control)', async () => {
      const token = forge({ alg: 'HS256', typ: 'JWT' }, claims(), secret());
      expect((await t.http.get('/auth/me', { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        200,
      );
    });

    it('refuses alg:none', () => expect401(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`));
    it('refuses a wrong secret', () => expect401(forge({ alg: 'HS256' }, claims(), 'wrong-secret')));
    it('refuses HS512', async () => {
      const unsigned = `${b64url({ alg: 'HS512' })}.${b64url(claims())}`;
      await expect401(`${unsigned}.${createHmac('sha512', secret()).update(unsigned).digest('base64url')}`);
    });
    it('refuses an expired token', () =>
      expect401(forge({ alg: 'HS256' }, { ...claims(), exp: now() - 10 }, secret())));
    it('refuses a wrong audience', () =>
      expect401(forge({ alg: 'HS256' }, { ...claims(), aud: 'someone-else' }, secret())));
    it('refuses a wrong issuer', () =>
      expect401(forge({ alg: 'HS256' }, { ...claims(), iss: 'evil' }, secret())));
    it('refuses garbage', () => expect401('not.a.token'));
    it('refuses a token without exp, however well signed (issue 12)', () => {
      const { exp: _exp, ...withoutExpiry } = claims();
      return expect401(forge({ alg: 'HS256', typ: 'JWT' }, withoutExpiry, secret()));
    });

    it('refuses tokens issued before a password change, a role change or a deactivation', async () => {
      const target = await createSession(t, Role.User);
      expect((await target.http.get('/auth/me')).status).toBe(200);
      await admin.http.patch(`/users/${target.user.id}/password`, { password: 'another-password' });
      expect((await target.http.get('/auth/me')).status).toBe(401);

      const promoted = await createSession(t, Role.User);
      await admin.http.patch(`/users/${promoted.user.id}`, { role: 'viewer' });
      expect((await promoted.http.get('/auth/me')).status).toBe(401);

      const removed = await createSession(t, Role.User);
      await admin.http.delete(`/users/${removed.user.id}`);
      expect((await removed.http.get('/auth/me')).status).toBe(401);
    });

    it('keeps tokens valid across unrelated profile changes', async () => {
      const target = await createSession(t, Role.User);
      await admin.http.patch(`/users/${target.user.id}`, { firstName: 'Renamed', role: 'user' });
      expect((await target.http.get('/auth/me')).status).toBe(200);
    });
  });

  describe('POST /auth/hash-password', () => {
    it('returns a bcrypt hash of the password', async () => {
      const res = await t.http.post(
        '/auth/hash-password',
        { password: 'secret1' },
        { headers: { 'x-forwarded-for': '198.51.100.9' } },
      );
      expect(res.status).toBe(200);
      // At the configured work factor (BCRYPT_COST, 4 in tests).
      const cost = process.env.BCRYPT_COST!.padStart(2, '0');
      expect(res.body.hash).toMatch(new RegExp(`^\\$2[aby]\\$${cost}\\$`));
    });

    it('answers 400 for a short or missing password', async () => {
      const headers = { 'x-forwarded-for': '198.51.100.10' };
      expect((await t.http.post('/auth/hash-password', { password: '123' }, { headers })).status).toBe(400);
      expect((await t.http.post('/auth/hash-password', {}, { headers })).status).toBe(400);
    });
  });
});
