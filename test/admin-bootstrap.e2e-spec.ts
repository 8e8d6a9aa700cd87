import { createTestApp, TestApp } from './helpers/app';

describe('ADMIN_EMAIL / ADMIN_PASSWORD bootstrap at start-up', () => {
  let t: TestApp;

  beforeAll(async () => {
    process.env.ADMIN_EMAIL = 'Owner@Example.com';
    process.env.ADMIN_PASSWORD = 'first-start-password';
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('creates an active admin that can log in', async () => {
    const res = await t.http.post('/auth/login', {
      email: 'owner@example.com',
      password: 'first-start-password',
    });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ email: 'owner@example.com', role: 'admin', name: 'Admin' });
  });

  it('leaves an existing user alone on the next start', async () => {
    const token = (
      await t.http.post('/auth/login', { email: 'owner@example.com', password: 'first-start-password' })
    ).body.token as string;
    const auth = { authorization: `Bearer ${token}` };
    const { body } = await t.http.get('/auth/me', { headers: auth });
    await t.http.patch(
      `/users/${body.user.id}/password`,
      { password: 'changed-by-owner' },
      { headers: auth },
    );

    await t.close();
    t = await createTestApp();
    expect(
      (await t.http.post('/auth/login', { email: 'owner@example.com', password: 'changed-by-owner' })).status,
    ).toBe(200);
    expect(
      (await t.http.post('/auth/login', { email: 'owner@example.com', password: 'first-start-password' }))
        .status,
    ).toBe(401);
  });
});
