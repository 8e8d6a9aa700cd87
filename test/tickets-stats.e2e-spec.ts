import type { App } from '../src/apps/schemas/app.schema';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { seedTickets } from './helpers/tickets';

describe('GET /{appId}/tickets/stats', () => {
  let t: TestApp;
  let viewer: Session;
  let app: App;
  let other: App;
  const at = (iso: string) => new Date(iso);
  const hoursLater = (iso: string, hours: number) => new Date(at(iso).getTime() + hours * 3_600_000);

  beforeAll(async () => {
    t = await createTestApp();
    viewer = await createSession(t, Role.Viewer);
    app = await seedApp(t);
    other = await seedApp(t);
    await seedTickets(t, [
      // In the range 2025-03-01 .. 2025-03-07:
      { appId: app.id, createdAt: at('2025-03-01T00:00:00Z'), shopId: 's1', subject: 'first' },
      {
        appId: app.id,
        createdAt: at('2025-03-01T12:00:00Z'),
        shopId: 's1',
        status: 'resolved',
        priority: 'high',
        topic: 'technical',
        resolvedAt: hoursLater('2025-03-01T12:00:00Z', 2),
        subject: 'second',
      },
      {
        appId: app.id,
        createdAt: at('2025-03-03T08:00:00Z'),
        shopId: 's1',
        status: 'closed',
        priority: 'urgent',
        topic: 'billing',
        resolvedAt: hoursLater('2025-03-03T08:00:00Z', 5.125),
        subject: 'third',
      },
      {
        appId: app.id,
        createdAt: at('2025-03-07T23:59:59.999Z'),
        shopId: 's2',
        status: 'in_progress',
        priority: 'low',
        topic: 'feature',
        subject: 'fourth',
        email: 'last@example.com',
      },
      // Outside the range, or another app's:
      { appId: app.id, createdAt: at('2025-02-28T23:59:59.999Z') },
      { appId: app.id, createdAt: at('2025-03-08T00:00:00Z') },
      {
        appId: other.id,
        createdAt: at('2025-03-02T10:00:00Z'),
        status: 'closed',
        resolvedAt: at('2025-03-09'),
      },
      // Recent, for the default range:
      { appId: app.id, createdAt: new Date(), subject: 'today' },
    ]);
  });
  afterAll(() => t.close());

  const stats = (query: Record<string, string> = {}, appId = app.id) =>
    viewer.http.get(`/${appId}/tickets/stats`, { query });

  it('counts, groups, zero-fills the days and averages the resolution time in hours', async () => {
    const res = await stats({ startDate: '2025-03-01', endDate: '2025-03-07' });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.total).toBe(4);
    expect(data.byStatus).toEqual({ pending: 1, in_progress: 1, resolved: 1, closed: 1 });
    expect(data.byTopic).toEqual({ general: 1, technical: 1, billing: 1, feature: 1 });
    expect(data.byPriority).toEqual({ low: 1, normal: 1, high: 1, urgent: 1 });
    expect(data.volumeOverTime).toEqual([
      { date: '2025-03-01', count: 2 },
      { date: '2025-03-02', count: 0 },
      { date: '2025-03-03', count: 1 },
      { date: '2025-03-04', count: 0 },
      { date: '2025-03-05', count: 0 },
      { date: '2025-03-06', count: 0 },
      { date: '2025-03-07', count: 1 },
    ]);
    // (2 h + 5.125 h) / 2 = 3.5625 h → 3.56
    expect(data.averageResolutionTime).toBe(3.56);
    expect(data.recentActivity.map((ticket: { subject: string }) => ticket.subject)).toEqual([
      'fourth',
      'third',
      'second',
      'first',
    ]);
    expect(Object.keys(data.recentActivity[0]).sort()).toEqual(
      ['_id', 'createdAt', 'email', 'priority', 'status', 'subject'].sort(),
    );
    expect(data.recentActivity[0]).toMatchObject({
      email: 'last@example.com',
      status: 'in_progress',
      priority: 'low',
      createdAt: '2025-03-07T23:59:59.999Z',
    });
  });

  it('filters by shopId', async () => {
    const data = (await stats({ startDate: '2025-03-01', endDate: '2025-03-07', shopId: 's2' })).body.data;
    expect(data.total).toBe(1);
    expect(data.averageResolutionTime).toBe(0);
    expect(data.byStatus).toEqual({ pending: 0, in_progress: 1, resolved: 0, closed: 0 });
  });

  it('covers the last 30 days by default', async () => {
    const data = (await stats()).body.data;
    expect(data.total).toBe(1);
    expect(data.recentActivity[0].subject).toBe('today');
    expect(data.volumeOverTime).toHaveLength(30);
    expect(data.volumeOverTime[29]).toEqual({ date: new Date().toISOString().slice(0, 10), count: 1 });
  });

  it('keeps the recent activity to the 10 newest', async () => {
    const seeds = Array.from({ length: 12 }, (_, i) => ({
      appId: other.id,
      createdAt: at(`2025-05-01T${String(i).padStart(2, '0')}:00:00Z`),
      subject: `s${i}`,
    }));
    await seedTickets(t, seeds);
    const data = (await stats({ startDate: '2025-05-01', endDate: '2025-05-01' }, other.id)).body.data;
    expect(data.total).toBe(12);
    expect(data.recentActivity).toHaveLength(10);
    expect(data.recentActivity[0].subject).toBe('s11');
    expect(data.volumeOverTime).toEqual([{ date: '2025-05-01', count: 12 }]);
  });

  it('answers zeros for an app without tickets, 404 for an unknown app', async () => {
    const range = { startDate: '2025-03-01', endDate: '2025-03-02' };
    expect((await stats(range, 'no-such-app')).status).toBe(404);
    const data = (await stats(range, (await seedApp(t)).id)).body.data;
    expect(data).toMatchObject({ total: 0, recentActivity: [], averageResolutionTime: 0 });
    expect(data.volumeOverTime).toEqual([
      { date: '2025-03-01', count: 0 },
      { date: '2025-03-02', count: 0 },
    ]);
  });

  it.each([
    [{ startDate: '2024-01-01', endDate: '2025-01-01' }, /at most 366 days/],
    [{ startDate: '2025-03-07', endDate: '2025-03-01' }, /startDate must not be after endDate/],
    [{ startDate: 'last week' }, /startDate/],
    [{ endDate: '2025-13-01' }, /endDate/],
    [{ status: 'pending' }, /status should not exist/],
  ])('answers 400 for %p', async (query, message) => {
    const res = await stats(query);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });
});
