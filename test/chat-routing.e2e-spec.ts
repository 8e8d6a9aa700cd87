import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/XXXXXXXX';
const OBJECT_ID = '0123456789abcdef01234567';

describe('Chat routing rules (/admin/chat-routing)', () => {
  let t: TestApp;
  let admin: Session;
  let user: Session;
  let viewer: Session;
  let appId: string;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ admin, user, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const create = (body: Record<string, unknown>) => admin.http.post('/admin/chat-routing', body);

  it('creates a rule, active, and lists the app’s rules by channel', async () => {
    const created = await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      message: 'Chat routing rule created',
      data: {
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        appId,
        channel: 'tickets',
        webhookUrl: SLACK_URL,
        active: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    await create({ appId, channel: 'feedback', webhookUrl: 'http://127.0.0.1:9999/hook' });
    const other = (await seedApp(t)).id;
    await create({ appId: other, channel: 'tickets', webhookUrl: SLACK_URL });

    const list = await admin.http.get('/admin/chat-routing/', { query: { appId } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: { channel: string }) => r.channel)).toEqual(['feedback', 'tickets']);
    expect(list.body.data[1]).toEqual(created.body.data);
    const none = await admin.http.get('/admin/chat-routing', { query: { appId: 'no-such-app' } });
    expect(none.body).toEqual({ success: true, data: [] });
  });

  it('requires appId to list', async () => {
    const res = await admin.http.get('/admin/chat-routing');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/appId/);
  });

  it('accepts every channel of the spec', async () => {
    for (const channel of [
      'tickets',
      'wants',
      'feedback',
      'newsletter',
      'email',
      'inbound',
      'agent',
      'digest',
    ]) {
      const res = await create({ appId, channel, webhookUrl: SLACK_URL });
      expect(res.status).toBe(201);
    }
  });

  it.each([
    ['a malformed app id', { appId: 'Not An Id' }, /appId/],
    ['an unknown channel', { channel: 'sms' }, /channel must be one of the following values/],
    ['a missing webhookUrl', { webhookUrl: undefined }, /webhookUrl/],
    ['a null webhookUrl', { webhookUrl: null }, /webhookUrl/],
    ['an ftp URL', { webhookUrl: 'ftp://chat.example.com/hook' }, /webhookUrl must be a URL/],
    ['a javascript: URL', { webhookUrl: 'javascript:alert(1)' }, /webhookUrl must be a URL/],
    ['a URL without a scheme', { webhookUrl: 'chat.example.com/hook' }, /webhookUrl must be a URL/],
    ['a URL with a password', { webhookUrl: 'https://user:secret@chat.example.com/hook' }, /webhookUrl/],
    [
      'a URL over 2,048 characters',
      { webhookUrl: `https://chat.example.com/${'a'.repeat(2_048)}` },
      /webhookUrl/,
    ],
    ['an unknown field', { extra: 1 }, /property extra should not exist/],
  ])('answers 400 to %s', async (_name, change, message) => {
    const res = await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL, ...change });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: expect.stringMatching(message) });
  });

  it('answers 404 for an unknown app, as every route naming an app does', async () => {
    const res = await create({ appId: 'no-such-app', channel: 'tickets', webhookUrl: SLACK_URL });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'App not found' });
  });

  it('answers 409 to a second rule for the same app and channel, and keeps the first', async () => {
    expect((await create({ appId, channel: 'wants', webhookUrl: SLACK_URL })).status).toBe(201);
    const again = await create({ appId, channel: 'wants', webhookUrl: 'https://chat.example.com/other' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      success: false,
      error: `App ${appId} already has a rule for channel wants; change it with PATCH`,
    });
    const list = await admin.http.get('/admin/chat-routing', { query: { appId } });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].webhookUrl).toBe(SLACK_URL);
  });

  it('updates the webhook and switches the rule off and on', async () => {
    const { _id } = (await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL })).body.data;
    const moved = await admin.http.patch(`/admin/chat-routing/${_id}`, {
      webhookUrl: 'https://discord.com/api/webhooks/1/abc',
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      message: 'Chat routing rule updated',
      data: { _id, webhookUrl: 'https://discord.com/api/webhooks/1/abc', active: true },
    });
    const off = await admin.http.patch(`/admin/chat-routing/${_id}`, { active: false });
    expect(off.body.data).toMatchObject({
      active: false,
      webhookUrl: 'https://discord.com/api/webhooks/1/abc',
    });
    const listed = await admin.http.get('/admin/chat-routing', { query: { appId } });
    expect(listed.body.data[0].active).toBe(false);
  });

  it.each([
    ['an empty body', {}, /Nothing to update: send at least one of webhookUrl, active/],
    ['an array body', [], /./],
    ['an array of fields', [{ active: false }], /./],
    ['a null webhookUrl', { webhookUrl: null }, /webhookUrl/],
    ['a null active', { active: null }, /active/],
    ['an http-less URL', { webhookUrl: 'file:///etc/passwd' }, /webhookUrl must be a URL/],
    ['a string active', { active: 'no' }, /active must be a boolean/],
    ['a field that is fixed', { channel: 'wants' }, /property channel should not exist/],
  ])('answers 400 to a PATCH with %s', async (_name, body, message) => {
    const { _id } = (await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL })).body.data;
    const res = await admin.http.patch(`/admin/chat-routing/${_id}`, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it('deletes a rule; unknown and malformed ids are 404', async () => {
    const { _id } = (await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL })).body.data;
    const deleted = await admin.http.delete(`/admin/chat-routing/${_id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: 'Chat routing rule deleted' });
    expect((await admin.http.get('/admin/chat-routing', { query: { appId } })).body.data).toEqual([]);
    for (const id of [_id, OBJECT_ID, 'not-an-id']) {
      for (const res of [
        await admin.http.delete(`/admin/chat-routing/${id}`),
        await admin.http.patch(`/admin/chat-routing/${id}`, { active: true }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: 'Chat routing rule not found' });
      }
    }
    // The channel is free again.
    expect((await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL })).status).toBe(201);
  });

  it('is for admins only', async () => {
    const { _id } = (await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL })).body.data;
    const calls = (s: Session | undefined) => {
      const http = s ? s.http : t.http;
      return [
        http.get('/admin/chat-routing', { query: { appId } }),
        http.post('/admin/chat-routing', { appId, channel: 'wants', webhookUrl: SLACK_URL }),
        http.patch(`/admin/chat-routing/${_id}`, { active: false }),
        http.delete(`/admin/chat-routing/${_id}`),
      ];
    };
    for (const [session, status] of [
      [undefined, 401],
      [viewer, 403],
      [user, 403],
    ] as const) {
      const results = await Promise.all(calls(session));
      expect(results.map((r) => r.status)).toEqual([status, status, status, status]);
    }
    const list = await admin.http.get('/admin/chat-routing', { query: { appId } });
    expect(list.body.data).toEqual([expect.objectContaining({ _id, active: true })]);
  });

  it('deletes an app’s rules with the app, so an app that reuses the id starts without them', async () => {
    await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL });
    const other = (await seedApp(t)).id;
    await create({ appId: other, channel: 'tickets', webhookUrl: SLACK_URL });
    expect((await admin.http.delete(`/admin/apps/${appId}`)).status).toBe(200);
    expect((await admin.http.get('/admin/chat-routing', { query: { appId } })).body.data).toEqual([]);
    expect((await admin.http.get('/admin/chat-routing', { query: { appId: other } })).body.data).toHaveLength(
      1,
    );
    await seedApp(t, { id: appId });
    expect((await create({ appId, channel: 'tickets', webhookUrl: SLACK_URL })).status).toBe(201);
  });
});
