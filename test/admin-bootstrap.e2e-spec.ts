import { Logger } from '@nestjs/common';
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

  it('reactivates and promotes the ADMIN_EMAIL user when no active admin is left, keeping its password', async () => {
    const users = () => t.connection.db!.collection('users');
    await users().updateOne({ email: 'owner@example.com' }, { $set: { isActive: false, role: 'user' } });
    const { password } = (await users().findOne({ email: 'owner@example.com' }))!;
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await t.close();
      t = await createTestApp();
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/no active admin.*reactivated ADMIN_EMAIL/i));
    } finally {
      warn.mockRestore();
    }
    expect(await users().findOne({ email: 'owner@example.com' })).toMatchObject({
      role: 'admin',
      isActive: true,
      password,
    });
  });

  it('leaves an inactive ADMIN_EMAIL user alone while another active admin exists', async () => {
    const users = () => t.connection.db!.collection('users');
    await users().updateOne({ email: 'owner@example.com' }, { $set: { isActive: false } });
    await users().insertOne({
      email: 'other-admin@example.com',
      password: 'x',
      firstName: 'Other',
      lastName: '',
      role: 'admin',
      isActive: true,
    });
    await t.close();
    t = await createTestApp();
    expect(await users().findOne({ email: 'owner@example.com' })).toMatchObject({ isActive: false });
  });
});
