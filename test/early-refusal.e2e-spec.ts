import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../src/api-keys/api-keys.service';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import type { TestResponse } from './helpers/http';
import { createSession } from './helpers/session';

/**
 * A credential that is certainly refused (no header, a signature not ours, a key known to be nobody's) is
 * answered by a Fastify hook before Nest (src/common/auth/early-refusal.ts,
 * docs/decisions/auth-certain-refusals-before-nest.md). What shows that Nest did not run: the
 * throttler, a Nest guard, never counts these requests, so a client past its budget still gets its 401.
 * What shows the answer is the same: the first request of a route goes through Nest, and every later one
 * answers it with the same status, body and headers.
 */
describe('Forged and unknown credentials refused before Nest', () => {
  const BUDGET = 3;
  let t: TestApp;

  beforeAll(async () => {
    process.env.RATE_LIMIT_PER_MINUTE = String(BUDGET);
    t = await createTestApp();
  });
  afterAll(async () => {
    delete process.env.RATE_LIMIT_PER_MINUTE;
    await t.close();
  });

  let clients = 0;
  /** A client address of its own per test, so each starts with a whole budget. */
  const newClient = (extra: Record<string, string> = {}) => {
    clients += 1;
    return { 'x-forwarded-for': `203.0.113.${clients}`, ...extra };
  };

  /** The rate limit's headers: only a request the throttler counted carries them. */
  const RATE_LIMIT_HEADER = /^x-ratelimit-/;

  /** The header names of an answer, but the rate limit's and those whose presence depends on the moment. */
  const headerNames = (res: TestResponse) =>
    Object.keys(res.headers)
      .filter((name) => !['date', 'connection', 'keep-alive'].includes(name) && !RATE_LIMIT_HEADER.test(name))
      .sort();

  /**
   * Sends the same request well past the client's budget (a GET, or a POST of `body`); every answer must be
   * the same 401.
   */
  async function expectRefusedEveryTime(
    url: string,
    headers: Record<string, string>,
    error: string,
    body?: object,
  ) {
    const answers: TestResponse[] = [];
    for (let i = 0; i < BUDGET * 3; i += 1) {
      answers.push(await (body ? t.http.post(url, body, { headers }) : t.http.get(url, { headers })));
    }
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 401));
    for (const res of answers) expect(res.body).toEqual({ success: false, error });
    // The first answer was Nest's (the route was not yet known), the others the hook's: the same headers.
    const [first, ...rest] = answers;
    for (const res of rest) {
      expect(headerNames(res)).toEqual(headerNames(first));
      expect(Object.keys(res.headers).filter((name) => RATE_LIMIT_HEADER.test(name))).toEqual([]);
    }
    expect(first.headers['x-content-type-options']).toBe('nosniff');
    expect(new Set(answers.map((res) => res.headers['x-request-id'])).size).toBe(answers.length);
  }

  describe('bearer routes', () => {
    const forged = (() => {
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const signature = randomBytes(32).toString('base64url');
      return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: 'x', tv: 0, exp: 2e9 })}.${signature}`;
    })();

    it('refuses a token whose signature is not ours, past the budget, always with 401', async () => {
      const headers = newClient({ authorization: `Bearer ${forged}` });
      await expectRefusedEveryTime('/auth/me', headers, 'Invalid or expired token');
    });

    it('refuses a missing header and a header that holds no JWT with their own messages', async () => {
      await expectRefusedEveryTime('/users', newClient(), 'Missing bearer token');
      await expectRefusedEveryTime(
        '/users',
        newClient({ authorization: 'Bearer garbage' }),
        'Invalid bearer token: expected Authorization: Bearer <jwt>',
      );
    });

    it('keeps CORS headers on a refused browser call', async () => {
      const headers = newClient({ authorization: `Bearer ${forged}`, origin: 'https://admin.example.com' });
      for (let i = 0; i < 2; i += 1) {
        const res = await t.http.get('/auth/me', { headers });
        expect(res.status).toBe(401);
        expect(res.headers['access-control-allow-origin']).toBe('https://admin.example.com');
      }
    });

    it('still lets a valid token through, counted by the rate limit as before', async () => {
      const admin = await createSession(t, Role.Admin);
      const headers = newClient();
      const statuses: number[] = [];
      for (let i = 0; i <= BUDGET; i += 1)
        statuses.push((await admin.http.get('/auth/me', { headers })).status);
      expect(statuses).toEqual([...Array<number>(BUDGET).fill(200), 429]);
    });

    it('never refuses early on a public route, whatever Authorization it carries', async () => {
      const headers = { authorization: `Bearer ${forged}` };
      for (let i = 0; i < 2; i += 1) expect((await t.http.get('/health/live', { headers })).status).toBe(200);
    });
  });

  describe('publishable-key routes', () => {
    const signup = { email: 'ada@example.com' };
    const page = (extra: Record<string, string> = {}) =>
      newClient({ origin: 'https://shop.example', ...extra });

    it("refuses a key known to be nobody's (after one lookup), a malformed key and no key", async () => {
      const nobodys = `pk_${randomBytes(16).toString('hex')}`;
      await expectRefusedEveryTime('/joinlist', page({ 'x-app-key': nobodys }), 'Invalid app key', signup);
      await expectRefusedEveryTime('/joinlist', page({ 'x-app-key': 'pk_$' }), 'Invalid app key', signup);
      await expectRefusedEveryTime('/joinlist', page(), 'Missing X-App-Key header', signup);
    });
  });

  describe('API-key routes', () => {
    it("refuses a key known to be nobody's (after one lookup), a malformed key and no key", async () => {
      const app = await seedApp(t);
      const unknown = `sk_${app.id}_${randomBytes(32).toString('hex')}`;
      await expectRefusedEveryTime(
        `/${app.id}/wants`,
        newClient({ 'x-api-key': unknown }),
        'Invalid API key',
      );
      await expectRefusedEveryTime(
        `/${app.id}/wants`,
        newClient({ 'x-api-key': 'sk_nope' }),
        'Invalid API key',
      );
      await expectRefusedEveryTime(`/${app.id}/wants`, newClient(), 'Missing X-API-Key header');
    });

    it('lets a real key through after the route learned its policy', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      const headers = newClient({ 'x-api-key': key.value });
      expect((await t.http.get(`/${app.id}/wants`, { headers: newClient() })).status).toBe(401);
      expect((await t.http.get(`/${app.id}/wants`, { headers })).status).toBe(200);
    });

    it("refuses a regenerated key's old value every time, and takes the new one", async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      const url = `/${app.id}/wants`;
      expect((await t.http.get(url, { headers: newClient({ 'x-api-key': key.value }) })).status).toBe(200);
      const { value } = await t.app.get(ApiKeysService).regenerate(key.id);
      await expectRefusedEveryTime(url, newClient({ 'x-api-key': key.value }), 'Invalid API key');
      expect((await t.http.get(url, { headers: newClient({ 'x-api-key': value }) })).status).toBe(200);
    });
  });
});
