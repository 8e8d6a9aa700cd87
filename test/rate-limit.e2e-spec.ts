import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { createSession } from './helpers/session';

/**
 * One request budget per client across routes (docs/decisions/security-hostile-input.md), its size from
 * RATE_LIMIT_PER_MINUTE.
 */
describe('Rate limit per client', () => {
  let t: TestApp;

  beforeAll(async () => {
    process.env.RATE_LIMIT_PER_MINUTE = '6';
    t = await createTestApp();
  });
  afterAll(async () => {
    delete process.env.RATE_LIMIT_PER_MINUTE;
    await t.close();
  });

  const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

  it('counts every route against one budget, with a plain Retry-After once it is spent', async () => {
    // Signed in: a request without a valid credential is refused before the rate limit counts it
    // (test/early-refusal.e2e-spec.ts).
    const admin = await createSession(t, Role.Admin);
    const client = from('203.0.113.1');
    const statuses: number[] = [];
    for (const url of ['/health', '/auth/me', '/users', '/health', '/apps', '/auth/me']) {
      statuses.push((await admin.http.get(url, client)).status);
    }
    expect(statuses).not.toContain(429);
    const spent = await admin.http.get('/users', client);
    expect(spent.status).toBe(429);
    expect(spent.body).toEqual({ success: false, error: expect.stringMatching(/Too Many Requests/) });
    expect(Number(spent.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('gives another client a budget of its own', async () => {
    expect((await t.http.get('/health', from('203.0.113.2'))).status).toBe(200);
  });

  it("keeps a route's tighter limit under the budget (login: 10 per minute, here the budget of 6 binds first)", async () => {
    const client = from('203.0.113.3');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      statuses.push(
        (await t.http.post('/auth/login', { email: 'x@y.test', password: 'wrong-pass' }, client)).status,
      );
    }
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(statuses[6]).toBe(429);
  });
});
