import { Role } from '../src/common/auth/roles';
import { createTestApp, type TestApp } from './helpers/app';
import { createSession, type Session } from './helpers/session';

/**
 * Each application has its own credential checks (src/common/auth/credential-checks.ts), so two
 * applications built in one process, with different secrets, each accept their own tokens and only
 * those. With Passport's process-wide strategies the application built last answered for both: the first
 * then refused its own tokens and took the second's.
 */
describe('Credential checks belong to their application', () => {
  const testSecret = process.env.APP_SECRET;
  let first: TestApp;
  let second: TestApp;
  let firstAdmin: Session;
  let secondAdmin: Session;

  beforeAll(async () => {
    first = await createTestApp();
    process.env.APP_SECRET = 'a-second-secret-that-is-at-least-thirty-two-characters-long';
    second = await createTestApp();
    firstAdmin = await createSession(first, Role.Admin);
    secondAdmin = await createSession(second, Role.Admin);
  });
  afterAll(async () => {
    process.env.APP_SECRET = testSecret;
    await second?.close();
    await first?.close();
  });

  it("accepts each application's own token", async () => {
    const mine = await first.http.get('/auth/me', {
      headers: { authorization: `Bearer ${firstAdmin.token}` },
    });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ user: { id: firstAdmin.user.id } });
    const theirs = await second.http.get('/auth/me', {
      headers: { authorization: `Bearer ${secondAdmin.token}` },
    });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ user: { id: secondAdmin.user.id } });
  });

  it("refuses the other application's token (another signing key)", async () => {
    for (const [app, token] of [
      [first, secondAdmin.token],
      [second, firstAdmin.token],
    ] as const) {
      const answer = await app.http.get('/auth/me', { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ success: false, error: 'Invalid or expired token' });
    }
  });
});
