import { getModelToken } from '@nestjs/mongoose';
import { createHash } from 'node:crypto';
import type { Model } from 'mongoose';
import { ApiKey } from '../src/api-keys/schemas/api-key.schema';
import { Role } from '../src/common/auth/roles';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

describe('API keys', () => {
  let t: TestApp;
  let sessions: Record<Role, Session>;
  let admin: Session;
  let keys: Model<ApiKey>;
  const APP = 'shop';
  const KEY_FORMAT = /^sk_shop_[0-9a-f]{64}$/;

  beforeAll(async () => {
    t = await createTestApp();
    keys = t.app.get<Model<ApiKey>>(getModelToken(ApiKey.name));
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    sessions = await createSessions(t);
    admin = sessions.admin;
    await seedApp(t, { id: APP });
  });

  const create = (overrides: Record<string, unknown> = {}) =>
    admin.http.post('/api-keys', { appId: APP, name: 'Backend', ...overrides });
  const inOneHour = () => new Date(Date.now() + 3_600_000).toISOString();

  describe('POST /api-keys', () => {
    it('creates a key and returns its full value with the record', async () => {
      const expiresAt = inOneHour();
      const res = await create({ description: 'Server', allowedOrigins: ['*.shop.test'], expiresAt });
      expect(res.status).toBe(201);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.data).toEqual({
        _id: expect.any(String),
        key: expect.stringMatching(KEY_FORMAT),
        appId: APP,
        name: 'Backend',
        description: 'Server',
        allowedOrigins: ['*.shop.test'],
        isActive: true,
        expiresAt,
        createdBy: admin.user.id,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(res.text).not.toMatch(/keyHash|encryptedKey/);
    });

    it('answers 404 for an app that does not exist, as every route naming an app does', async () => {
      const res = await create({ appId: 'ghost' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'App not found' });
    });

    it.each([
      [{ appId: undefined }, /appId/],
      [{ appId: 'Bad App' }, /appId must match/],
      [{ name: undefined }, /name/],
      [{ name: ' ' }, /name should not be empty/],
      [{ description: 'x'.repeat(501) }, /description/],
      [{ allowedOrigins: ['example.com'] }, /allowedOrigins/],
      [{ expiresAt: 'tomorrow' }, /expiresAt must be an ISO 8601 date-time/],
      [{ expiresAt: new Date(Date.now() - 60_000).toISOString() }, /expiresAt must be in the future/],
      [{ isActive: false }, /isActive should not exist/],
      [{ key: 'sk_shop_mine' }, /key should not exist/],
    ])('answers 400 naming the field for %p', async (overrides, message) => {
      const res = await create(overrides);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('stores no clear key value anywhere: only its SHA-256 hash and an AES-GCM ciphertext', async () => {
      const created = (await create({ description: 'scan me' })).body.data;
      const other = (await create({ name: 'Other' })).body.data;
      const regenerated = (await admin.http.post(`/api-keys/${other._id}/regenerate`)).body.data;
      await admin.http.patch(`/api-keys/${created._id}`, { name: 'Renamed' });

      const docs = await t.connection.db!.collection('api_keys').find({}).toArray();
      expect(docs).toHaveLength(2);
      const everything = JSON.stringify(docs);
      for (const value of [created.key, other.key, regenerated.key]) {
        expect(everything).not.toContain(value);
        expect(everything).not.toContain(value.slice(-64));
        expect(everything).not.toContain(value.slice(-64, -32));
      }
      const stored = docs.find((d) => String(d._id) === created._id)!;
      expect(stored.keyHash).toBe(createHash('sha256').update(created.key).digest('hex'));
      expect(stored.encryptedKey).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(Object.keys(stored)).not.toContain('key');
    });

    it('is for admins only', async () => {
      const res = await sessions.user.http.post('/api-keys', { appId: APP, name: 'x' });
      expect(res.status).toBe(403);
    });
  });

  describe('GET /api-keys/:keyId', () => {
    it('returns the record with its decrypted full value', async () => {
      const created = (await create()).body.data;
      const res = await admin.http.get(`/api-keys/${created._id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ ...created });
    });

    it('is refused to viewers and users (it reveals the secret)', async () => {
      const created = (await create()).body.data;
      expect((await sessions.viewer.http.get(`/api-keys/${created._id}`)).status).toBe(403);
      expect((await sessions.user.http.get(`/api-keys/${created._id}`)).status).toBe(403);
    });

    it('answers 404 for a malformed or unknown id', async () => {
      expect((await admin.http.get('/api-keys/not-an-id')).status).toBe(404);
      const res = await admin.http.get('/api-keys/64b7f0c2a1b2c3d4e5f60718');
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('API key not found');
    });
  });

  describe('GET /api-keys', () => {
    beforeEach(async () => {
      await seedApp(t, { id: 'blog' });
      await seedApiKey(t, APP, { name: 'Alpha server', description: 'orders sync' });
      await seedApiKey(t, APP, { name: 'Beta worker', description: 'Newsletter (cron.*)' });
      const revoked = await seedApiKey(t, 'blog', { name: 'Gamma' });
      await keys.updateOne({ _id: revoked.id }, { $set: { isActive: false } });
    });

    it('lists keys newest first, paginated, never with a secret', async () => {
      const res = await sessions.viewer.http.get('/api-keys', { query: { limit: 2 } });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({
        page: 1,
        limit: 2,
        total: 3,
        pages: 2,
        totalCapped: false,
      });
      expect(res.body.data.map((k: { name: string }) => k.name)).toEqual(['Gamma', 'Beta worker']);
      expect(res.text).not.toMatch(/sk_|keyHash|encryptedKey|"key"/);
      const second = await admin.http.get('/api-keys', { query: { limit: 2, page: 2 } });
      expect(second.body.data.map((k: { name: string }) => k.name)).toEqual(['Alpha server']);
    });

    it('filters by appId and isActive', async () => {
      const byApp = await admin.http.get('/api-keys', { query: { appId: 'blog' } });
      expect(byApp.body.data.map((k: { name: string }) => k.name)).toEqual(['Gamma']);
      const active = await admin.http.get('/api-keys', { query: { isActive: 'true' } });
      expect(active.body.pagination.total).toBe(2);
      const inactive = await admin.http.get('/api-keys', { query: { isActive: 'false' } });
      expect(inactive.body.data.map((k: { name: string }) => k.name)).toEqual(['Gamma']);
    });

    it.each([
      ['SERVER', ['Alpha server']],
      ['newsletter', ['Beta worker']],
      ['(cron.*)', ['Beta worker']],
      ['.+', []],
      ['^Alpha', []],
      ['a', ['Gamma', 'Beta worker', 'Alpha server']],
    ])('searches name and description for %p, literally and case-insensitively', async (search, names) => {
      const res = await admin.http.get('/api-keys', { query: { search } });
      expect(res.status).toBe(200);
      expect(res.body.data.map((k: { name: string }) => k.name)).toEqual(names);
    });

    it('sorts by a known field in either order', async () => {
      const asc = await admin.http.get('/api-keys', { query: { sortBy: 'name', sortOrder: 'asc' } });
      expect(asc.body.data.map((k: { name: string }) => k.name)).toEqual([
        'Alpha server',
        'Beta worker',
        'Gamma',
      ]);
      const desc = await admin.http.get('/api-keys', { query: { sortBy: 'name' } });
      expect(desc.body.data.map((k: { name: string }) => k.name)).toEqual([
        'Gamma',
        'Beta worker',
        'Alpha server',
      ]);
    });

    it.each([
      [{ sortBy: 'keyHash' }, /sortBy/],
      [{ sortOrder: 'up' }, /sortOrder/],
      [{ search: 'x'.repeat(101) }, /search/],
      [{ isActive: 'yes' }, /isActive/],
      [{ appId: 'Bad App' }, /appId/],
      [{ limit: 101 }, /limit/],
      [{ page: 0 }, /page/],
    ])('answers 400 for %p', async (query, message) => {
      const res = await admin.http.get('/api-keys', { query });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });
  });

  describe('GET /api-keys/stats', () => {
    beforeEach(async () => {
      await seedApp(t, { id: 'blog' });
      await seedApiKey(t, APP);
      await seedApiKey(t, APP, { expiresAt: new Date(Date.now() + 3_600_000) });
      const revoked = await seedApiKey(t, APP);
      await keys.updateOne({ _id: revoked.id }, { $set: { isActive: false } });
      const expired = await seedApiKey(t, APP);
      await keys.updateOne({ _id: expired.id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      await seedApiKey(t, 'blog');
    });

    it('counts working, revoked and expired keys, overall and per app', async () => {
      const res = await sessions.viewer.http.get('/api-keys/stats');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        total: 5,
        active: 3,
        inactive: 1,
        expired: 1,
        byApp: {
          blog: { total: 1, active: 1, inactive: 0, expired: 0 },
          shop: { total: 4, active: 2, inactive: 1, expired: 1 },
        },
      });
    });

    it('narrows to one app', async () => {
      const res = await admin.http.get('/api-keys/stats', { query: { appId: 'blog' } });
      expect(res.body.data).toEqual({
        total: 1,
        active: 1,
        inactive: 0,
        expired: 0,
        byApp: { blog: { total: 1, active: 1, inactive: 0, expired: 0 } },
      });
    });

    it('documents the per-app counts in OpenAPI', async () => {
      const doc = (await t.http.get('/docs-json')).body;
      expect(doc.components.schemas.ApiKeyAppStats.required).toEqual([
        'total',
        'active',
        'inactive',
        'expired',
      ]);
      expect(doc.components.schemas.ApiKeyStatsView.properties.byApp.additionalProperties).toEqual({
        $ref: '#/components/schemas/ApiKeyAppStats',
      });
    });

    it('answers zeros when there are no keys', async () => {
      const res = await admin.http.get('/api-keys/stats', { query: { appId: 'nothing' } });
      expect(res.body.data).toEqual({ total: 0, active: 0, inactive: 0, expired: 0, byApp: {} });
    });
  });

  describe('PATCH /api-keys/:keyId', () => {
    it('updates the editable fields and never returns the secret', async () => {
      const created = (await create({ description: 'old', expiresAt: inOneHour() })).body.data;
      const expiresAt = new Date(Date.now() + 7_200_000).toISOString();
      const res = await admin.http.patch(`/api-keys/${created._id}`, {
        name: 'Renamed',
        description: 'new',
        allowedOrigins: ['https://shop.test'],
        isActive: false,
        expiresAt,
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.data).toMatchObject({
        _id: created._id,
        name: 'Renamed',
        description: 'new',
        allowedOrigins: ['https://shop.test'],
        isActive: false,
        expiresAt,
      });
      expect(res.body.data).not.toHaveProperty('key');
    });

    it('clears the expiry and the description with null', async () => {
      const created = (await create({ description: 'old', expiresAt: inOneHour() })).body.data;
      const res = await admin.http.patch(`/api-keys/${created._id}`, { expiresAt: null, description: null });
      expect(res.status).toBe(200);
      expect(res.body.data).not.toHaveProperty('expiresAt');
      expect(res.body.data).not.toHaveProperty('description');
    });

    it.each([
      [{ appId: 'blog' }, /appId should not exist/],
      [{ key: 'sk_x' }, /key should not exist/],
      [{ name: null }, /name must not be null/],
      [{ isActive: 'no' }, /isActive must be a boolean/],
      [{ expiresAt: 'soon' }, /expiresAt/],
      [{ allowedOrigins: ['*.'] }, /allowedOrigins/],
    ])('answers 400 for %p', async (body, message) => {
      const created = (await create()).body.data;
      const res = await admin.http.patch(`/api-keys/${created._id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('answers 404 for an unknown key', async () => {
      expect((await admin.http.patch('/api-keys/64b7f0c2a1b2c3d4e5f60718', { name: 'x' })).status).toBe(404);
    });
  });

  describe('DELETE /api-keys/:keyId', () => {
    it('removes the record permanently', async () => {
      const created = (await create()).body.data;
      const res = await admin.http.delete(`/api-keys/${created._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'API key deleted' });
      expect(await keys.countDocuments({})).toBe(0);
      expect((await admin.http.delete(`/api-keys/${created._id}`)).status).toBe(404);
    });

    it('answers 404 for a malformed id', async () => {
      expect((await admin.http.delete('/api-keys/nope')).status).toBe(404);
    });
  });

  describe('POST /api-keys/:keyId/revoke', () => {
    it('deactivates the key and returns it without the secret', async () => {
      const created = (await create()).body.data;
      const res = await admin.http.post(`/api-keys/${created._id}/revoke`);
      expect(res.status).toBe(200);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.data).toMatchObject({ _id: created._id, isActive: false });
      expect(res.body.data).not.toHaveProperty('key');
    });

    it('answers 404 for an unknown key', async () => {
      expect((await admin.http.post('/api-keys/64b7f0c2a1b2c3d4e5f60718/revoke')).status).toBe(404);
    });
  });

  describe('POST /api-keys/:keyId/regenerate', () => {
    it('gives the same record a new value and returns exactly the spec fields', async () => {
      const created = (await create()).body.data;
      const res = await admin.http.post(`/api-keys/${created._id}/regenerate`);
      expect(res.status).toBe(200);
      expect(res.body.message).toEqual(expect.any(String));
      expect(res.body.data).toEqual({
        _id: created._id,
        key: expect.stringMatching(KEY_FORMAT),
        appId: APP,
        name: 'Backend',
        isActive: true,
        createdAt: created.createdAt,
      });
      expect(res.body.data.key).not.toBe(created.key);
      expect((await admin.http.get(`/api-keys/${created._id}`)).body.data.key).toBe(res.body.data.key);
      expect(await keys.countDocuments({})).toBe(1);
    });

    it('answers 404 for an unknown key', async () => {
      expect((await admin.http.post('/api-keys/64b7f0c2a1b2c3d4e5f60718/regenerate')).status).toBe(404);
    });
  });
});
