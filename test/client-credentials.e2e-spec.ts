import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ApiKey } from '../src/api-keys/schemas/api-key.schema';
import { Role } from '../src/common/auth/roles';
import { CredentialChanges } from '../src/common/credentials/credential-changes';
import { createTestApp, TestApp } from './helpers/app';
import { seedApiKey, seedApp } from './helpers/factories';
import { GuardsProbeModule } from './helpers/guards-probe.module';
import { createSession, Session } from './helpers/session';

/** @ApiKeyAuth() and @AppKeyAuth() through test-only routes (test/helpers/guards-probe.module.ts). */
describe('Client credentials', () => {
  let t: TestApp;
  let admin: Session;
  let keys: Model<ApiKey>;

  beforeAll(async () => {
    t = await createTestApp({ imports: [GuardsProbeModule] });
    admin = await createSession(t, Role.Admin);
    keys = t.app.get<Model<ApiKey>>(getModelToken(ApiKey.name));
  });
  afterAll(() => t.close());

  describe('@ApiKeyAuth() (X-API-Key)', () => {
    const keyRoute = (appId: string, headers: Record<string, string> = {}) =>
      t.http.get(`/__guards/${appId}/key-route`, { headers });

    it('accepts a valid key of the path app and exposes it to the handler', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      const res = await keyRoute(app.id, { 'x-api-key': key.value });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: key.id, appId: app.id });
    });

    it('accepts a key on a route without {appId}', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      const res = await t.http.get('/__guards/key-route', { headers: { 'x-api-key': key.value } });
      expect(res.status).toBe(200);
      expect(res.body.data.appId).toBe(app.id);
    });

    it.each([
      ['missing', undefined, /Missing X-API-Key/],
      ['empty', '', /Missing X-API-Key/],
      ['malformed', 'not-a-key', /Invalid API key/],
      ['unknown', `sk_some-app_${'0'.repeat(64)}`, /Invalid API key/],
    ])('answers 401 for a %s key', async (_label, value, message) => {
      const app = await seedApp(t);
      const res = await keyRoute(app.id, value === undefined ? {} : { 'x-api-key': value });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, error: expect.stringMatching(message) });
    });

    it('does not take a bearer token instead of a key', async () => {
      const app = await seedApp(t);
      const res = await admin.http.get(`/__guards/${app.id}/key-route`);
      expect(res.status).toBe(401);
    });

    it("answers 403 for another app's key (cross-app use)", async () => {
      const [mine, theirs] = [await seedApp(t), await seedApp(t)];
      const key = await seedApiKey(t, theirs.id);
      const res = await keyRoute(mine.id, { 'x-api-key': key.value });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/another app/);
    });

    it('answers 403 for a revoked key', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      expect((await admin.http.post(`/api-keys/${key.id}/revoke`)).status).toBe(200);
      const res = await keyRoute(app.id, { 'x-api-key': key.value });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/revoked/);
    });

    it('answers 403 while its app is switched off, and works again once it is on (issue 12)', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      expect((await admin.http.post(`/admin/apps/${app.id}/toggle`)).status).toBe(200);
      const off = await keyRoute(app.id, { 'x-api-key': key.value });
      expect(off.status).toBe(403);
      expect(off.body).toEqual({ success: false, error: 'This app is inactive' });
      expect((await t.http.get('/__guards/key-route', { headers: { 'x-api-key': key.value } })).status).toBe(
        403,
      );
      await admin.http.post(`/admin/apps/${app.id}/toggle`);
      expect((await keyRoute(app.id, { 'x-api-key': key.value })).status).toBe(200);
    });

    it('answers 403 for an expired key', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      await keys.updateOne({ _id: key.id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const res = await keyRoute(app.id, { 'x-api-key': key.value });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/expired/);
    });

    it('accepts a key whose expiry is still ahead', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id, { expiresAt: new Date(Date.now() + 60_000) });
      expect((await keyRoute(app.id, { 'x-api-key': key.value })).status).toBe(200);
    });

    describe('with allowedOrigins', () => {
      let appId: string;
      let value: string;
      beforeAll(async () => {
        appId = (await seedApp(t)).id;
        ({ value } = await seedApiKey(t, appId, {
          allowedOrigins: ['https://shop.example.com', '*.example.org'],
        }));
      });

      it.each(['https://shop.example.com', 'https://a.example.org', 'http://a.b.example.org:8080'])(
        'accepts Origin %s',
        async (origin) => {
          expect((await keyRoute(appId, { 'x-api-key': value, origin })).status).toBe(200);
        },
      );

      it.each(['https://evil.test', 'https://example.org', 'http://shop.example.com', 'null'])(
        'answers 403 to Origin %s',
        async (origin) => {
          const res = await keyRoute(appId, { 'x-api-key': value, origin });
          expect(res.status).toBe(403);
          expect(res.body.error).toMatch(/Origin not allowed/);
        },
      );

      it('accepts a call without Origin (server to server)', async () => {
        expect((await keyRoute(appId, { 'x-api-key': value })).status).toBe(200);
      });
    });

    it('ignores Origin when the key has no allowedOrigins', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      const res = await keyRoute(app.id, { 'x-api-key': key.value, origin: 'https://anywhere.test' });
      expect(res.status).toBe(200);
    });

    it('records lastUsed at most once a minute, without touching updatedAt', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      const before = await keys.findById(key.id).lean();
      expect(before!.lastUsed).toBeUndefined();

      await keyRoute(app.id, { 'x-api-key': key.value });
      const first = await keys.findById(key.id).lean();
      expect(first!.lastUsed).toBeInstanceOf(Date);
      expect(first!.updatedAt).toEqual(before!.updatedAt);

      await keyRoute(app.id, { 'x-api-key': key.value });
      expect((await keys.findById(key.id).lean())!.lastUsed).toEqual(first!.lastUsed);

      const longAgo = new Date(Date.now() - 2 * 60_000);
      await keys.updateOne({ _id: key.id }, { $set: { lastUsed: longAgo } }, { timestamps: false });
      // The instance decides from the key it cached: a change announced (as any key change is) re-reads it.
      await t.app.get(CredentialChanges).announce('api-keys');
      await keyRoute(app.id, { 'x-api-key': key.value });
      const later = (await keys.findById(key.id).lean())!.lastUsed!;
      expect(later.getTime()).toBeGreaterThan(longAgo.getTime() + 60_000);
    });

    it('refuses the old value at once after regenerate, and accepts the new one', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      expect((await keyRoute(app.id, { 'x-api-key': key.value })).status).toBe(200);
      const regenerated = await admin.http.post(`/api-keys/${key.id}/regenerate`);
      expect(regenerated.status).toBe(200);
      expect((await keyRoute(app.id, { 'x-api-key': key.value })).status).toBe(401);
      expect((await keyRoute(app.id, { 'x-api-key': regenerated.body.data.key })).status).toBe(200);
    });

    it('refuses a deleted key, and the keys of a deleted app', async () => {
      const app = await seedApp(t);
      const [deleted, kept] = [await seedApiKey(t, app.id), await seedApiKey(t, app.id)];
      expect((await admin.http.delete(`/api-keys/${deleted.id}`)).status).toBe(200);
      expect((await keyRoute(app.id, { 'x-api-key': deleted.value })).status).toBe(401);
      expect((await keyRoute(app.id, { 'x-api-key': kept.value })).status).toBe(200);

      expect((await admin.http.delete(`/admin/apps/${app.id}`)).status).toBe(200);
      expect((await keyRoute(app.id, { 'x-api-key': kept.value })).status).toBe(401);
    });

    it('does not let a key of a deleted app work for a new app of the same id', async () => {
      const app = await seedApp(t);
      const key = await seedApiKey(t, app.id);
      await admin.http.delete(`/admin/apps/${app.id}`);
      expect((await admin.http.post('/admin/apps', { id: app.id, name: 'Reborn' })).status).toBe(201);
      expect((await keyRoute(app.id, { 'x-api-key': key.value })).status).toBe(401);
    });
  });

  describe('@AppKeyAuth() (X-App-Key + Origin)', () => {
    const appRoute = (headers: Record<string, string>) => t.http.post('/__guards/app-route', {}, { headers });

    it('accepts the publishable key with an allowed Origin and exposes the app', async () => {
      const app = await seedApp(t, { allowedOrigins: ['https://shop.example.com'] });
      const res = await appRoute({ 'x-app-key': app.publicKey, origin: 'https://shop.example.com' });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ appId: app.id });
    });

    it.each([
      [['*.example.com'], 'https://www.example.com'],
      [['*'], 'https://anything.test'],
      [['http://localhost:5173'], 'http://localhost:5173'],
    ])('accepts allowedOrigins %p with Origin %s', async (allowedOrigins, origin) => {
      const app = await seedApp(t, { allowedOrigins });
      expect((await appRoute({ 'x-app-key': app.publicKey, origin })).status).toBe(200);
    });

    it.each([
      ['missing', undefined, /Missing X-App-Key/],
      ['malformed', 'sk_x', /Invalid app key/],
      ['unknown', `pk_${'0'.repeat(48)}`, /Invalid app key/],
    ])('answers 401 for a %s key', async (_label, key, message) => {
      const res = await appRoute({
        ...(key === undefined ? {} : { 'x-app-key': key }),
        origin: 'https://shop.example.com',
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatch(message);
    });

    it('answers 403 without an Origin header', async () => {
      const app = await seedApp(t, { allowedOrigins: ['*'] });
      const res = await appRoute({ 'x-app-key': app.publicKey });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/Missing Origin/);
    });

    it.each([
      [['https://shop.example.com'], 'https://evil.test'],
      [['https://shop.example.com'], 'https://shop.example.com:8443'],
      [['*.example.com'], 'https://example.com'],
      [[], 'https://shop.example.com'],
    ])('answers 403 for allowedOrigins %p and Origin %s', async (allowedOrigins, origin) => {
      const app = await seedApp(t, { allowedOrigins });
      const res = await appRoute({ 'x-app-key': app.publicKey, origin });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/Origin not allowed/);
    });

    it('answers 403 for an inactive app', async () => {
      const app = await seedApp(t, { allowedOrigins: ['*'], active: false });
      const res = await appRoute({ 'x-app-key': app.publicKey, origin: 'https://a.test' });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/inactive/);
    });

    it('does not take an API key instead', async () => {
      const app = await seedApp(t, { allowedOrigins: ['*'] });
      const key = await seedApiKey(t, app.id);
      const res = await appRoute({ 'x-api-key': key.value, origin: 'https://a.test' });
      expect(res.status).toBe(401);
    });

    it('refuses the old publishable key at once after rotate-key, saying it was rotated', async () => {
      const app = await seedApp(t, { allowedOrigins: ['*'] });
      const origin = 'https://a.test';
      const rotated = await admin.http.post(`/admin/apps/${app.id}/rotate-key`);
      expect(rotated.status).toBe(200);
      const old = await appRoute({ 'x-app-key': app.publicKey, origin });
      expect(old.status).toBe(403);
      expect(old.body.error).toMatch(/rotated/);
      // Rotated twice: both earlier keys are refused the same way.
      const again = await admin.http.post(`/admin/apps/${app.id}/rotate-key`);
      expect((await appRoute({ 'x-app-key': rotated.body.data.publicKey, origin })).status).toBe(403);
      expect((await appRoute({ 'x-app-key': app.publicKey, origin })).status).toBe(403);
      expect((await appRoute({ 'x-app-key': again.body.data.publicKey, origin })).status).toBe(200);
    });
  });

  it('documents the credentials in OpenAPI', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const keyRoute = doc.paths['/__guards/{appId}/key-route'].get;
    const appRoute = doc.paths['/__guards/app-route'].post;
    expect(keyRoute.security).toEqual([{ 'api-key': [] }]);
    expect(appRoute.security).toEqual([{ 'app-key': [] }]);
    for (const operation of [keyRoute, appRoute]) {
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403']));
    }
  });
});
