import { EventEmitter2 } from '@nestjs/event-emitter';
import { FeedbackEvents } from '../src/feedback/feedback.events';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

describe('Feedback', () => {
  let t: TestApp;
  let admin: Session;
  let viewer: Session;
  let appId: string;
  let otherAppId: string;
  let ipCounter = 0;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ admin, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
    otherAppId = (await seedApp(t)).id;
  });

  /** Each submission from its own IP, so the per-IP limit only bites where a test wants it. */
  const submit = (app: string, body: Record<string, unknown>, ip = `203.0.113.${++ipCounter % 250}`) =>
    t.http.post(`/${app}/feedback`, body, { headers: { 'x-forwarded-for': ip } });
  const valid = { type: 'bug', subject: 'Crash on save', message: 'It crashes when I save.' };

  describe('POST /{appId}/feedback (public)', () => {
    it('stores anonymous feedback as new/normal and emits feedback.created', async () => {
      const seen: unknown[] = [];
      t.app.get(EventEmitter2).once(FeedbackEvents.Created, (event) => seen.push(event));
      const res = await submit(appId, { ...valid, email: 'reporter@example.com' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        appId,
        ...valid,
        email: 'reporter@example.com',
        status: 'new',
        priority: 'normal',
      });
      expect(seen).toEqual([{ appId, feedbackId: res.body.data._id, type: 'bug', subject: 'Crash on save' }]);
    });

    it('omits an email sent as null (not given) instead of answering null against the schema', async () => {
      const res = await submit(appId, { ...valid, email: null });
      expect(res.status).toBe(201);
      expect(res.body.data).not.toHaveProperty('email');
      const listed = await admin.http.get(`/admin/${appId}/feedback`);
      expect(listed.body.data[0]).not.toHaveProperty('email');
    });

    it('answers 404 for an unknown or inactive app', async () => {
      expect((await submit('no-such-app', valid)).status).toBe(404);
      const inactive = await seedApp(t, { active: false });
      expect((await submit(inactive.id, valid)).status).toBe(404);
    });

    it.each([
      [{ type: 'rant' }, /type/],
      [{ subject: '' }, /subject/],
      [{ message: 'x'.repeat(5001) }, /message/],
      [{ email: 'not-an-email' }, /email/],
      [{ status: 'resolved' }, /status should not exist/],
    ])('answers 400 for %p', async (override, message) => {
      const res = await submit(appId, { ...valid, ...override });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('throttles per client IP (10 a minute)', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i += 1) statuses.push((await submit(appId, valid, '192.0.2.200')).status);
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(201));
      expect(statuses[10]).toBe(429);
    });
  });

  describe('admin', () => {
    let ids: string[];
    beforeEach(async () => {
      ids = [];
      for (const body of [
        { type: 'bug', subject: 'B1', message: 'm' },
        { type: 'bug', subject: 'B2', message: 'm' },
        { type: 'praise', subject: 'P1', message: 'm' },
      ]) {
        ids.push((await submit(appId, body)).body.data._id);
      }
      await submit(otherAppId, { type: 'question', subject: 'Other app', message: 'm' });
      await admin.http.patch(`/admin/${appId}/feedback/${ids[0]}/status`, { status: 'resolved' });
    });

    it('stats count by type and status for the app only', async () => {
      const res = await viewer.http.get(`/admin/${appId}/feedback/stats`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        total: 3,
        byType: { bug: 2, praise: 1 },
        byStatus: { new: 2, resolved: 1 },
      });
    });

    it('lists with filters, sorting and pagination, never another app’s feedback', async () => {
      const all = await viewer.http.get(`/admin/${appId}/feedback`);
      expect(all.body.pagination).toMatchObject({
        page: 1,
        limit: 20,
        total: 3,
        pages: 1,
        totalCapped: false,
      });
      expect(all.body.data.map((f: { subject: string }) => f.subject)).toEqual(['P1', 'B2', 'B1']);
      const bugs = await viewer.http.get(`/admin/${appId}/feedback`, {
        query: { type: 'bug', sortOrder: 'asc' },
      });
      expect(bugs.body.data.map((f: { subject: string }) => f.subject)).toEqual(['B1', 'B2']);
      const resolved = await viewer.http.get(`/admin/${appId}/feedback`, { query: { status: 'resolved' } });
      expect(resolved.body.data.map((f: { subject: string }) => f.subject)).toEqual(['B1']);
      const byType = await viewer.http.get(`/admin/${appId}/feedback`, {
        query: { sortBy: 'type', sortOrder: 'desc', limit: 1, page: 1 },
      });
      expect(byType.body.data.map((f: { subject: string }) => f.subject)).toEqual(['P1']);
      expect(byType.body.pagination).toMatchObject({
        page: 1,
        limit: 1,
        total: 3,
        pages: 3,
        totalCapped: false,
      });
      expect(all.text).not.toMatch(/Other app/);
    });

    it.each<Record<string, string>>([
      { type: 'rant' },
      { status: 'open' },
      { priority: 'asap' },
      { sortBy: 'email' },
      { sortOrder: 'up' },
    ])('answers 400 for list query %p', async (query) => {
      expect((await viewer.http.get(`/admin/${appId}/feedback`, { query })).status).toBe(400);
    });

    it('gets, edits, prioritises and deletes; another app’s id is 404', async () => {
      expect((await viewer.http.get(`/admin/${appId}/feedback/${ids[1]}`)).body.data.subject).toBe('B2');
      expect((await viewer.http.get(`/admin/${otherAppId}/feedback/${ids[1]}`)).status).toBe(404);
      expect((await viewer.http.get(`/admin/${appId}/feedback/not-an-id`)).status).toBe(404);

      const edited = await admin.http.patch(`/admin/${appId}/feedback/${ids[1]}`, {
        type: 'feature',
        subject: 'Renamed',
      });
      expect(edited.body.data).toMatchObject({ type: 'feature', subject: 'Renamed', message: 'm' });
      expect(
        (await admin.http.patch(`/admin/${appId}/feedback/${ids[1]}`, { email: 'x@example.com' })).status,
      ).toBe(400);
      expect(
        (await admin.http.patch(`/admin/${otherAppId}/feedback/${ids[1]}`, { subject: 'Hijack' })).status,
      ).toBe(404);

      const prioritised = await admin.http.patch(`/admin/${appId}/feedback/${ids[1]}/priority`, {
        priority: 'urgent',
      });
      expect(prioritised.body.data.priority).toBe('urgent');
      expect(
        (await admin.http.patch(`/admin/${appId}/feedback/${ids[1]}/priority`, { priority: 'asap' })).status,
      ).toBe(400);
      expect(
        (await admin.http.patch(`/admin/${appId}/feedback/${ids[1]}/status`, { status: 'open' })).status,
      ).toBe(400);

      expect((await admin.http.delete(`/admin/${otherAppId}/feedback/${ids[1]}`)).status).toBe(404);
      const deleted = await admin.http.delete(`/admin/${appId}/feedback/${ids[1]}`);
      expect(deleted.body).toEqual({ success: true, message: expect.any(String) });
      expect((await viewer.http.get(`/admin/${appId}/feedback/${ids[1]}`)).status).toBe(404);
    });

    it('lets a user edit but not a viewer', async () => {
      const { user } = await createSessions(t);
      expect(
        (await user.http.patch(`/admin/${appId}/feedback/${ids[2]}/status`, { status: 'reviewed' })).status,
      ).toBe(200);
      expect(
        (await viewer.http.patch(`/admin/${appId}/feedback/${ids[2]}/status`, { status: 'reviewed' })).status,
      ).toBe(403);
    });
  });
});
