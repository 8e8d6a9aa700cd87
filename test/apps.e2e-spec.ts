import { Role } from '../src/common/auth/roles';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

describe('Apps', () => {
  let t: TestApp;
  let sessions: Record<Role, Session>;
  let admin: Session;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    sessions = await createSessions(t);
    admin = sessions.admin;
  });

  const newApp = (overrides: Record<string, unknown> = {}) => ({
    id: 'my-shop',
    name: 'My Shop',
    ...overrides,
  });

  describe('GET /apps', () => {
    it('lists active apps by name with boolean features, to any signed-in user', async () => {
      await seedApp(t, {
        id: 'zeta',
        name: 'Zeta',
        features: { canEditTemplates: true, canViewMetrics: 'yes' },
      });
      await seedApp(t, { id: 'alpha', name: 'Alpha', features: { canEditUsers: true, other: 1 } });
      await seedApp(t, { id: 'off', name: 'Off', active: false });
      const res = await sessions.viewer.http.get('/apps');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([
        {
          id: 'alpha',
          name: 'Alpha',
          features: { canEditTemplates: false, canEditUsers: true, canViewMetrics: false },
        },
        {
          id: 'zeta',
          name: 'Zeta',
          features: { canEditTemplates: true, canEditUsers: false, canViewMetrics: false },
        },
      ]);
      expect(res.text).not.toMatch(/pk_/);
    });

    it('answers 401 without a token', async () => {
      expect((await t.http.get('/apps')).status).toBe(401);
    });
  });

  describe('POST /admin/apps', () => {
    it('creates an app with a generated publishable key and defaults', async () => {
      const res = await admin.http.post(
        '/admin/apps',
        newApp({ allowedOrigins: ['https://shop.example.com'] }),
      );
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        _id: expect.any(String),
        id: 'my-shop',
        name: 'My Shop',
        features: {},
        chatChannels: {},
        allowedOrigins: ['https://shop.example.com'],
        publicKey: expect.stringMatching(/^pk_[0-9a-f]{48}$/),
        active: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it('stores every optional field', async () => {
      const body = newApp({
        description: 'Shop front',
        features: { canEditTemplates: true, plan: 'pro', seats: 5 },
        chatChannels: { tickets: 'https://chat.example.com/t', wants: 'https://chat.example.com/w' },
        active: false,
      });
      const res = await admin.http.post('/admin/apps', body);
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ ...body, name: 'My Shop' });
    });

    it('gives each app a different publishable key', async () => {
      const a = await admin.http.post('/admin/apps', newApp({ id: 'a' }));
      const b = await admin.http.post('/admin/apps', newApp({ id: 'b' }));
      expect(a.body.data.publicKey).not.toBe(b.body.data.publicKey);
    });

    it('answers 409 for a taken id', async () => {
      await admin.http.post('/admin/apps', newApp());
      const res = await admin.http.post('/admin/apps', newApp({ name: 'Other' }));
      expect(res.status).toBe(409);
      expect(res.body.error).toMatch(/id/);
    });

    it.each([
      [{ id: 'My-Shop' }, /id must match/],
      [{ id: '-shop' }, /id must match/],
      [{ id: 'my_shop' }, /id must match/],
      [{ id: 'a'.repeat(65) }, /id must be shorter/],
      [{ id: undefined }, /id/],
      [{ name: undefined }, /name/],
      [{ name: '   ' }, /name should not be empty/],
      [{ features: ['a'] }, /features must be an object/],
      [{ features: { $set: 1 } }, /features/],
      [{ features: { 'a.b': 1 } }, /features/],
      // Flat scalars only (docs/decisions/security-hostile-input.md): nesting, arrays, nulls, long text and
      // too many entries are refused.
      [{ features: { nested: { a: [1, 2] } } }, /features must be an object of at most 50 names/],
      [{ features: { list: [1, 2] } }, /features/],
      [{ features: { none: null } }, /features/],
      [{ features: { text: 'x'.repeat(501) } }, /features/],
      [{ features: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, true])) }, /features/],
      [{ chatChannels: { tickets: 42 } }, /chatChannels/],
      [{ chatChannels: { 'Bad Name': 'x' } }, /chatChannels/],
      [{ allowedOrigins: 'https://a.test' }, /allowedOrigins must be an array/],
      [{ allowedOrigins: ['shop.example.com'] }, /allowedOrigins/],
      [{ active: 'yes' }, /active must be a boolean/],
      [{ description: null }, /description must be a string/],
      [{ publicKey: 'pk_mine' }, /publicKey should not exist/],
    ])('answers 400 naming the field for %p', async (overrides, message) => {
      const res = await admin.http.post('/admin/apps', newApp(overrides));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('is for admins only', async () => {
      expect((await sessions.user.http.post('/admin/apps', newApp())).status).toBe(403);
    });
  });

  describe('GET /admin/apps', () => {
    beforeEach(async () => {
      await seedApp(t, { id: 'b-app', name: 'Beta' });
      await seedApp(t, { id: 'a-app', name: 'Alpha', active: false });
    });

    it('lists all app records by name, to viewers too', async () => {
      const res = await sessions.viewer.http.get('/admin/apps');
      expect(res.status).toBe(200);
      expect(res.body.data.map((a: { id: string }) => a.id)).toEqual(['a-app', 'b-app']);
      expect(res.body.data[0]).toMatchObject({ active: false, publicKey: expect.stringMatching(/^pk_/) });
    });

    it('filters with activeOnly', async () => {
      const active = await admin.http.get('/admin/apps', { query: { activeOnly: 'true' } });
      expect(active.body.data.map((a: { id: string }) => a.id)).toEqual(['b-app']);
      const all = await admin.http.get('/admin/apps', { query: { activeOnly: 'false' } });
      expect(all.body.data).toHaveLength(2);
    });

    it('answers 400 for another activeOnly value', async () => {
      const res = await admin.http.get('/admin/apps', { query: { activeOnly: 'yes' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/activeOnly/);
    });
  });

  describe('GET /admin/apps/:id', () => {
    it('returns the record', async () => {
      const app = await seedApp(t, { id: 'one', name: 'One' });
      const res = await sessions.viewer.http.get('/admin/apps/one');
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: 'one', name: 'One', publicKey: app.publicKey });
    });

    it('answers 404 for an unknown id', async () => {
      const res = await admin.http.get('/admin/apps/nope');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'App not found' });
    });
  });

  describe('PATCH /admin/apps/:id', () => {
    it('updates fields, replaces features and keeps the rest', async () => {
      const app = await seedApp(t, {
        id: 'one',
        description: 'Old',
        features: { canEditUsers: true, old: 1 },
        allowedOrigins: ['https://a.test'],
      });
      const res = await admin.http.patch('/admin/apps/one', {
        name: 'Renamed',
        features: { canViewMetrics: true },
        chatChannels: { feedback: 'https://chat.test/f' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: 'one',
        name: 'Renamed',
        description: 'Old',
        features: { canViewMetrics: true },
        chatChannels: { feedback: 'https://chat.test/f' },
        allowedOrigins: ['https://a.test'],
        publicKey: app.publicKey,
      });
      expect(res.body.data.features).not.toHaveProperty('old');
    });

    it('clears the description with null', async () => {
      await seedApp(t, { id: 'one', description: 'Old' });
      const res = await admin.http.patch('/admin/apps/one', { description: null });
      expect(res.status).toBe(200);
      expect(res.body.data).not.toHaveProperty('description');
    });

    it.each([
      [{ id: 'other' }, /id should not exist/],
      [{ publicKey: 'pk_x' }, /publicKey should not exist/],
      [{ name: '' }, /name should not be empty/],
      [{ name: null }, /name must not be null/],
      [{ active: null }, /active must not be null/],
      [{ allowedOrigins: ['*.'] }, /allowedOrigins/],
    ])('answers 400 for %p', async (body, message) => {
      await seedApp(t, { id: 'one' });
      const res = await admin.http.patch('/admin/apps/one', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('answers 404 for an unknown app', async () => {
      expect((await admin.http.patch('/admin/apps/nope', { name: 'X' })).status).toBe(404);
    });
  });

  describe('DELETE /admin/apps/:id', () => {
    it("deletes the app and its API keys, keeps other apps' keys and the app's tenant data", async () => {
      const [doomed, other] = [await seedApp(t, { id: 'doomed' }), await seedApp(t, { id: 'other' })];
      await seedApiKey(t, doomed.id);
      await seedApiKey(t, doomed.id);
      await seedApiKey(t, other.id);
      const tickets = t.connection.db!.collection('tickets');
      await tickets.insertOne({ appId: 'doomed', subject: 'Kept' });

      const res = await admin.http.delete('/admin/apps/doomed');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'App deleted' });
      expect((await admin.http.get('/admin/apps/doomed')).status).toBe(404);
      const apiKeys = t.connection.db!.collection('api_keys');
      expect(await apiKeys.countDocuments({ appId: 'doomed' })).toBe(0);
      expect(await apiKeys.countDocuments({ appId: 'other' })).toBe(1);
      expect(await tickets.countDocuments({ appId: 'doomed' })).toBe(1);
    });

    it('answers 404 for an unknown app', async () => {
      expect((await admin.http.delete('/admin/apps/nope')).status).toBe(404);
    });
  });

  describe('POST /admin/apps/:id/rotate-key', () => {
    it('replaces the publishable key and returns {id, publicKey}', async () => {
      const app = await seedApp(t, { id: 'one' });
      const res = await admin.http.post('/admin/apps/one/rotate-key');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: 'one', publicKey: expect.stringMatching(/^pk_[0-9a-f]{48}$/) });
      expect(res.body.data.publicKey).not.toBe(app.publicKey);
      expect((await admin.http.get('/admin/apps/one')).body.data.publicKey).toBe(res.body.data.publicKey);
    });

    it('answers 404 for an unknown app', async () => {
      expect((await admin.http.post('/admin/apps/nope/rotate-key')).status).toBe(404);
    });
  });

  describe('POST /admin/apps/:id/toggle', () => {
    it('inverts active each time and returns the record', async () => {
      await seedApp(t, { id: 'one' });
      const off = await admin.http.post('/admin/apps/one/toggle');
      expect(off.status).toBe(200);
      expect(off.body.data).toMatchObject({ id: 'one', active: false });
      expect((await sessions.viewer.http.get('/apps')).body.data).toEqual([]);
      const on = await admin.http.post('/admin/apps/one/toggle');
      expect(on.body.data.active).toBe(true);
    });

    it('answers 404 for an unknown app', async () => {
      expect((await admin.http.post('/admin/apps/nope/toggle')).status).toBe(404);
    });
  });
});
