import { Role } from '../src/common/auth/roles';
import { createTestApp, type TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSession, type Session } from './helpers/session';

/**
 * Webhook URLs that the URL syntax check used to accept but the WHATWG URL parser (which sending uses)
 * refuses: each answered 500. They are a 400 naming the field, on create and update alike.
 */
const ODD_URLS = [
  'http://[fe80::1%25eth0]/',
  'http://[fe80::1%eth0]/hook',
  'http://[::1%251]/',
  'http://xn--zz.com/hook',
  'http://\u2488.com/hook',
  'http://\ud800.com/hook',
  'https://chat.example.com/\u0000hook',
  'https://chat.example.com/hook\r\nX-Injected: 1',
];

describe('Chat routing: odd webhook URLs are a 400 naming webhookUrl', () => {
  let t: TestApp;
  let admin: Session;
  let appId: string;
  let ruleId: string;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await createSession(t, Role.Admin);
    appId = (await seedApp(t)).id;
    const rule = { appId, channel: 'feedback', webhookUrl: 'https://chat.example.com/hook' };
    ruleId = (await admin.http.post('/admin/chat-routing', rule)).body.data._id;
  });
  afterAll(() => t.close());

  it.each(ODD_URLS)('create refuses %j', async (webhookUrl) => {
    const res = await admin.http.post('/admin/chat-routing', { appId, channel: 'tickets', webhookUrl });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(/webhookUrl/) });
  });

  it.each(ODD_URLS)('update refuses %j', async (webhookUrl) => {
    const res = await admin.http.patch(`/admin/chat-routing/${ruleId}`, { webhookUrl });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(/webhookUrl/) });
  });

  it('still takes ordinary URLs, IPv6 literals and international names', async () => {
    for (const [channel, webhookUrl] of [
      ['wants', 'http://[2001:4860::8888]:8080/hook'],
      ['newsletter', 'https://例え.jp/hook'],
      ['email', 'https://hooks.slack.com/services/T0/B0/x'],
    ]) {
      const res = await admin.http.post('/admin/chat-routing', { appId, channel, webhookUrl });
      expect(res.status).toBe(201);
    }
  });
});
