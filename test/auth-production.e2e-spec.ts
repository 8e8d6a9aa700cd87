import { createTestApp, TestApp } from './helpers/app';

describe('POST /auth/hash-password in production', () => {
  let t: TestApp;

  beforeAll(async () => {
    process.env.NODE_ENV = 'production';
    // Production refuses the test run's cheap bcrypt cost.
    process.env.BCRYPT_COST = '10';
    // ... and TRUST_PROXY=true: the tests' requests come from the loopback address.
    process.env.TRUST_PROXY = 'loopback';
    // ... and a placeholder From or link host.
    process.env.MAIL_FROM = 'news@mail.example.com';
    process.env.PUBLIC_BASE_URL = 'https://mail.example.com';
    // ... and mail to files unless asked for.
    process.env.EMAIL_TRANSPORT = 'outbox';
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers 404 as if the route did not exist', async () => {
    const res = await t.http.post('/auth/hash-password', { password: 'secret1' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Cannot POST /auth/hash-password' });
  });
});
