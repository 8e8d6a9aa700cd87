import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

describe('Newsletter templates', () => {
  let t: TestApp;
  let user: Session;
  let viewer: Session;
  let appId: string;
  let otherAppId: string;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ user, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
    otherAppId = (await seedApp(t)).id;
  });

  const base = (app = appId) => `/admin/${app}/newsletter/templates`;
  const body = {
    name: ' Monthly ',
    subject: 'News for {{firstName}}',
    htmlContent: '<p>Hello {{firstName}}</p>',
  };
  const create = async (app = appId, extra: Record<string, unknown> = {}) => {
    const res = await user.http.post(base(app), { ...body, ...extra });
    expect(res.status).toBe(201);
    return res.body.data as { _id: string };
  };

  it('creates a template of the app, active, created by the signed-in user', async () => {
    const res = await user.http.post(base(), body);
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      _id: expect.any(String),
      name: 'Monthly',
      subject: body.subject,
      htmlContent: body.htmlContent,
      textContent: null,
      isActive: true,
      createdBy: user.user.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('refuses bad bodies, a viewer and an unknown app', async () => {
    expect((await user.http.post(base(), { ...body, name: '' })).status).toBe(400);
    expect((await user.http.post(base(), { name: 'x', subject: 'y' })).status).toBe(400);
    expect((await user.http.post(base(), { ...body, textContent: null })).status).toBe(400);
    expect((await user.http.post(base(), { ...body, isActive: false })).status).toBe(400);
    expect((await viewer.http.post(base(), body)).status).toBe(403);
    expect((await user.http.post(base('no-such-app'), body)).status).toBe(404);
  });

  it("lists the app's templates only, newest first, to every role", async () => {
    const first = await create();
    const second = await create(appId, { name: 'Weekly' });
    await create(otherAppId);
    const res = await viewer.http.get(base());
    expect(res.status).toBe(200);
    expect(res.body.data.map((tpl: { _id: string }) => tpl._id)).toEqual([second._id, first._id]);
  });

  it('edits and deactivates; clears the text part with null; another app’s id is 404', async () => {
    const { _id } = await create(appId, { textContent: 'Hello' });
    const res = await user.http.patch(`${base()}/${_id}`, {
      subject: 'New subject',
      isActive: false,
      textContent: null,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      subject: 'New subject',
      isActive: false,
      textContent: null,
      name: 'Monthly',
    });

    expect((await user.http.patch(`${base()}/${_id}`, {})).status).toBe(400);
    expect((await user.http.patch(`${base()}/${_id}`, { name: null })).status).toBe(400);
    expect((await viewer.http.patch(`${base()}/${_id}`, { name: 'x' })).status).toBe(403);
    expect((await user.http.patch(`${base(otherAppId)}/${_id}`, { name: 'x' })).status).toBe(404);
    expect((await user.http.patch(`${base()}/not-an-id`, { name: 'x' })).status).toBe(404);
  });

  it('deletes within the app only', async () => {
    const { _id } = await create();
    expect((await viewer.http.delete(`${base()}/${_id}`)).status).toBe(403);
    expect((await user.http.delete(`${base(otherAppId)}/${_id}`)).status).toBe(404);
    const res = await user.http.delete(`${base()}/${_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    expect((await user.http.delete(`${base()}/${_id}`)).status).toBe(404);
    expect((await viewer.http.get(base())).body.data).toEqual([]);
  });

  it('seeds a campaign of the same app with an active template only', async () => {
    const { _id } = await create(appId, { textContent: 'Hello' });
    const campaigns = `/admin/${appId}/newsletter/campaigns`;
    const seeded = await user.http.post(campaigns, { name: 'From a template', templateId: _id });
    expect(seeded.status).toBe(201);
    expect(seeded.body.data).toMatchObject({ subject: body.subject, status: 'draft' });
    // Another app's template, a malformed id and a switched-off template seed nothing.
    const foreign = await user.http.post(`/admin/${otherAppId}/newsletter/campaigns`, {
      name: 'Not mine',
      templateId: _id,
    });
    expect(foreign.status).toBe(400);
    expect((await user.http.post(campaigns, { name: 'x', templateId: 'nonsense' })).status).toBe(400);
    await user.http.patch(`${base()}/${_id}`, { isActive: false });
    const inactive = await user.http.post(campaigns, { name: 'Switched off', templateId: _id });
    expect(inactive.status).toBe(400);
    expect(inactive.body.error).toMatch(/templateId/);
  });
});
