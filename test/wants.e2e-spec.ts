import { EventEmitter2 } from '@nestjs/event-emitter';
import { WantEvents } from '../src/wants/want.events';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import type { HttpClient } from './helpers/http';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

describe('Wants', () => {
  let t: TestApp;
  let admin: Session;
  let viewer: Session;
  let appId: string;
  let otherAppId: string;
  /** The app's backend: its secret API key, calling for end user `u1`. */
  let client: HttpClient;
  let otherClient: HttpClient;
  let appKey: string;

  const issueKey = async (forApp: string) => {
    const res = await admin.http.post('/api-keys', { appId: forApp, name: `key of ${forApp}` });
    expect(res.status).toBe(201);
    return res.body.data.key as string;
  };

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ admin, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
    otherAppId = (await seedApp(t)).id;
    appKey = await issueKey(appId);
    client = t.http.with({ 'x-api-key': appKey, 'x-user-id': 'u1' });
    otherClient = t.http.with({ 'x-api-key': await issueKey(otherAppId) });
  });

  const want = (title: string, category = 'ui') => ({ title, description: `About ${title}`, category });
  const create = async (title: string, category = 'ui') =>
    (await client.post(`/${appId}/wants`, want(title, category))).body.data;

  describe('public (API key)', () => {
    it('creates an open want, emits want.created, and shows the public view', async () => {
      const seen: unknown[] = [];
      t.app.get(EventEmitter2).once(WantEvents.Created, (event) => seen.push(event));
      const res = await client.post(`/${appId}/wants`, {
        ...want('Dark mode'),
        authorEmail: 'fan@example.com',
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        appId,
        title: 'Dark mode',
        category: 'ui',
        status: 'open',
        voteCount: 0,
        hasVoted: false,
        authorEmail: 'fan@example.com',
      });
      expect(res.body.data.priority).toBeUndefined();
      expect(seen).toEqual([{ appId, wantId: res.body.data._id, title: 'Dark mode', category: 'ui' }]);
    });

    it('omits authorEmail sent as null (not given) instead of answering null against the schema', async () => {
      const res = await client.post(`/${appId}/wants`, { ...want('No author'), authorEmail: null });
      expect(res.status).toBe(201);
      expect(res.body.data).not.toHaveProperty('authorEmail');
      const read = await client.get(`/${appId}/wants/${res.body.data._id}`);
      expect(read.body.data).not.toHaveProperty('authorEmail');
    });

    it.each([
      [{ title: '' }, /title/],
      [{ title: 'x'.repeat(201) }, /title/],
      [{ description: undefined }, /description/],
      [{ category: 'x'.repeat(51) }, /category/],
      [{ status: 'planned' }, /status should not exist/],
      [{ voteCount: 99 }, /voteCount should not exist/],
    ])('answers 400 for %p', async (override, message) => {
      const res = await client.post(`/${appId}/wants`, { ...want('T'), ...override });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('toggles a vote per voter and reports hasVoted for the caller', async () => {
      const { _id } = await create('Export');
      const first = await client.post(`/${appId}/wants/${_id}/vote`);
      expect(first.status).toBe(200);
      expect(first.body.data).toEqual({ voteCount: 1, hasVoted: true });

      const u2 = client.with({ 'x-user-id': 'u2' });
      expect((await u2.post(`/${appId}/wants/${_id}/vote`)).body.data).toEqual({
        voteCount: 2,
        hasVoted: true,
      });
      expect((await client.get(`/${appId}/wants/${_id}`)).body.data).toMatchObject({
        voteCount: 2,
        hasVoted: true,
      });
      expect(
        (await client.with({ 'x-user-id': 'u3' }).get(`/${appId}/wants/${_id}`)).body.data.hasVoted,
      ).toBe(false);

      expect((await client.post(`/${appId}/wants/${_id}/vote`)).body.data).toEqual({
        voteCount: 1,
        hasVoted: false,
      });
      expect((await client.post(`/${appId}/wants/${_id}/vote`)).body.data).toEqual({
        voteCount: 2,
        hasVoted: true,
      });
    });

    it('uses the client IP as the voter without X-User-Id', async () => {
      const { _id } = await create('By IP');
      const fromIp = (ip: string) => t.http.with({ 'x-api-key': appKey, 'x-forwarded-for': ip });
      expect((await fromIp('198.51.100.7').post(`/${appId}/wants/${_id}/vote`)).body.data).toEqual({
        voteCount: 1,
        hasVoted: true,
      });
      expect((await fromIp('198.51.100.8').get(`/${appId}/wants/${_id}`)).body.data.hasVoted).toBe(false);
      expect((await fromIp('198.51.100.7').get(`/${appId}/wants/${_id}`)).body.data.hasVoted).toBe(true);
      // An end user id never collides with an IP voter.
      expect(
        (await client.with({ 'x-user-id': '198.51.100.7' }).get(`/${appId}/wants/${_id}`)).body.data.hasVoted,
      ).toBe(false);
    });

    it('keeps voteCount equal to the vote records under 50 concurrent voters', async () => {
      const { _id } = await create('Popular');
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          client.with({ 'x-user-id': `voter-${i}` }).post(`/${appId}/wants/${_id}/vote`),
        ),
      );
      expect(results.every((r) => r.status === 200 && r.body.data.hasVoted === true)).toBe(true);
      const stored = await client.get(`/${appId}/wants/${_id}`);
      expect(stored.body.data.voteCount).toBe(50);
      expect(await t.connection.db!.collection('want_votes').countDocuments({})).toBe(50);
    });

    it('keeps the count exact when one voter toggles concurrently', async () => {
      const { _id } = await create('Flicker');
      const results = await Promise.all(
        Array.from({ length: 9 }, () => client.post(`/${appId}/wants/${_id}/vote`)),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const votes = await t.connection.db!.collection('want_votes').countDocuments({});
      expect((await client.get(`/${appId}/wants/${_id}`)).body.data.voteCount).toBe(votes);
    });

    it('lists with pagination, filters, sorts and hasVoted', async () => {
      const a = await create('A', 'ui');
      const b = await create('B', 'api');
      const c = await create('C', 'ui');
      await client.post(`/${appId}/wants/${b._id}/vote`);
      await client.with({ 'x-user-id': 'u2' }).post(`/${appId}/wants/${b._id}/vote`);
      await client.with({ 'x-user-id': 'u2' }).post(`/${appId}/wants/${c._id}/vote`);
      await admin.http.patch(`/admin/${appId}/wants/${a._id}/status`, { status: 'planned' });

      const byVotes = await client.get(`/${appId}/wants`);
      expect(byVotes.status).toBe(200);
      expect(byVotes.body.data.map((w: { title: string }) => w.title)).toEqual(['B', 'C', 'A']);
      expect(byVotes.body.data.map((w: { hasVoted: boolean }) => w.hasVoted)).toEqual([true, false, false]);
      expect(byVotes.body.pagination).toMatchObject({
        page: 1,
        limit: 20,
        total: 3,
        pages: 1,
        totalCapped: false,
      });

      const titles = async (query: Record<string, string | number>) =>
        (await client.get(`/${appId}/wants`, { query })).body.data.map((w: { title: string }) => w.title);
      expect(await titles({ sort: 'oldest' })).toEqual(['A', 'B', 'C']);
      expect(await titles({ sort: 'newest' })).toEqual(['C', 'B', 'A']);
      expect(await titles({ category: 'ui', sort: 'oldest' })).toEqual(['A', 'C']);
      expect(await titles({ status: 'planned' })).toEqual(['A']);
      expect(await titles({ sort: 'oldest', limit: 1, page: 2 })).toEqual(['B']);
      const invalid: Record<string, string | number>[] = [
        { sort: 'random' },
        { status: 'done' },
        { limit: 0 },
      ];
      for (const query of invalid) {
        expect((await client.get(`/${appId}/wants`, { query })).status).toBe(400);
      }
    });

    it('refuses another app’s key (403) and a missing key (401); never shows another app’s wants', async () => {
      const { _id } = await create('Private');
      expect((await otherClient.get(`/${appId}/wants`)).status).toBe(403);
      expect((await otherClient.post(`/${appId}/wants/${_id}/vote`)).status).toBe(403);
      expect((await t.http.get(`/${appId}/wants`)).status).toBe(401);
      expect((await otherClient.get(`/${otherAppId}/wants/${_id}`)).status).toBe(404);
      expect((await otherClient.post(`/${otherAppId}/wants/${_id}/vote`)).status).toBe(404);
      expect((await otherClient.get(`/${otherAppId}/wants`)).body.data).toEqual([]);
    });

    it('answers 404 for unknown and malformed want ids, 400 for a malformed X-User-Id', async () => {
      expect((await client.get(`/${appId}/wants/64b7f0c2a1b2c3d4e5f60718`)).status).toBe(404);
      expect((await client.get(`/${appId}/wants/nope`)).status).toBe(404);
      const { _id } = await create('X');
      const res = await client
        .with({ 'x-user-id': 'bad id with spaces' })
        .post(`/${appId}/wants/${_id}/vote`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/X-User-Id/);
    });
  });

  describe('admin', () => {
    it('stats by status, category and priority', async () => {
      const a = await create('A', 'ui');
      await create('B', 'api');
      await create('C', 'ui');
      await admin.http.patch(`/admin/${appId}/wants/${a._id}/status`, { status: 'planned' });
      await admin.http.patch(`/admin/${appId}/wants/${a._id}/priority`, { priority: 'high' });
      await otherClient.post(`/${otherAppId}/wants`, want('Elsewhere'));
      const res = await viewer.http.get(`/admin/${appId}/wants/stats`);
      expect(res.body.data).toEqual({
        total: 3,
        byStatus: { open: 2, planned: 1 },
        byCategory: { ui: 2, api: 1 },
        byPriority: { normal: 2, high: 1 },
      });
    });

    it('lists and gets the admin view (priority, no hasVoted), scoped to the app', async () => {
      const { _id } = await create('Admin view');
      await otherClient.post(`/${otherAppId}/wants`, want('Elsewhere'));
      const list = await viewer.http.get(`/admin/${appId}/wants`);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).toMatchObject({ title: 'Admin view', priority: 'normal' });
      expect(list.body.data[0].hasVoted).toBeUndefined();
      expect((await viewer.http.get(`/admin/${appId}/wants/${_id}`)).body.data.priority).toBe('normal');
      expect((await viewer.http.get(`/admin/${otherAppId}/wants/${_id}`)).status).toBe(404);
    });

    it('edits title, description and category only', async () => {
      const { _id } = await create('Old');
      const res = await admin.http.patch(`/admin/${appId}/wants/${_id}`, { title: 'New', category: 'api' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ title: 'New', category: 'api', description: 'About Old' });
      expect((await admin.http.patch(`/admin/${appId}/wants/${_id}`, { voteCount: 5 })).status).toBe(400);
      expect((await admin.http.patch(`/admin/${appId}/wants/${_id}`, { status: 'planned' })).status).toBe(
        400,
      );
      expect((await admin.http.patch(`/admin/${otherAppId}/wants/${_id}`, { title: 'Hijack' })).status).toBe(
        404,
      );
    });

    it('changes status (emitting want.status_changed) and priority with enum validation', async () => {
      const { _id } = await create('Flow');
      const seen: unknown[] = [];
      t.app.get(EventEmitter2).once(WantEvents.StatusChanged, (event) => seen.push(event));
      const res = await admin.http.patch(`/admin/${appId}/wants/${_id}/status`, { status: 'in_progress' });
      expect(res.body.data.status).toBe('in_progress');
      expect(seen).toEqual([{ appId, wantId: _id, title: 'Flow', from: 'open', to: 'in_progress' }]);
      expect((await admin.http.patch(`/admin/${appId}/wants/${_id}/status`, { status: 'done' })).status).toBe(
        400,
      );
      expect(
        (await admin.http.patch(`/admin/${appId}/wants/${_id}/priority`, { priority: 'urgent' })).body.data
          .priority,
      ).toBe('urgent');
      expect(
        (await admin.http.patch(`/admin/${appId}/wants/${_id}/priority`, { priority: 'p0' })).status,
      ).toBe(400);
      expect(
        (await viewer.http.patch(`/admin/${appId}/wants/${_id}/priority`, { priority: 'low' })).status,
      ).toBe(403);
    });

    it('deletes a want with its votes', async () => {
      const { _id } = await create('Doomed');
      await client.post(`/${appId}/wants/${_id}/vote`);
      expect((await admin.http.delete(`/admin/${otherAppId}/wants/${_id}`)).status).toBe(404);
      const res = await admin.http.delete(`/admin/${appId}/wants/${_id}`);
      expect(res.body).toEqual({ success: true, message: expect.any(String) });
      expect((await client.get(`/${appId}/wants/${_id}`)).status).toBe(404);
      expect(await t.connection.db!.collection('want_votes').countDocuments({})).toBe(0);
    });
  });
});
