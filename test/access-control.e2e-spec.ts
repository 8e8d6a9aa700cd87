import { DiscoveryModule } from '@nestjs/core';
import { Access, Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { routeTable, RouteEntry, sampleUrl } from './helpers/route-table';
import { createSessions, Session } from './helpers/session';

/**
 * Walks the application's route table: every route must carry an explicit auth decision, and every bearer
 * route must enforce the role matrix of docs/architecture.md "Credentials and roles". A route added without a
 * decision fails here.
 */
describe('Access control: role × route', () => {
  let t: TestApp;
  let sessions: Record<Role, Session>;
  let routes: RouteEntry[];

  /** Routes any signed-in user may call whatever the method; their handlers check the rest. */
  const SIGNED_IN_ROUTES = [
    'POST /auth/refresh',
    'GET /auth/me',
    'POST /auth/logout',
    'POST /auth/2fa/setup',
    'POST /auth/2fa/enable',
    'POST /auth/2fa/disable',
    'PATCH /users/:id/password',
    'GET /apps',
  ];

  beforeAll(async () => {
    t = await createTestApp({ imports: [DiscoveryModule] });
    sessions = await createSessions(t);
    routes = routeTable(t.app);
  });
  afterAll(() => t.close());

  const label = (r: RouteEntry) => `${r.method} ${r.path}`;
  const bearer = (access?: Access) =>
    routes.filter((r) => r.policy?.credential === 'bearer' && (!access || r.policy.access === access));
  const call = (http: TestApp['http'], r: RouteEntry) =>
    http.request(r.method as 'GET', sampleUrl(r.path), { body: {} });

  it('finds the routes', () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.map(label)).toEqual(
      expect.arrayContaining(['POST /auth/login', 'GET /users', 'GET /health']),
    );
  });

  it('gives every route an explicit auth decision', () => {
    expect(routes.filter((r) => !r.policy).map(label)).toEqual([]);
  });

  it('lists exactly the known routes as open to any signed-in user', () => {
    expect(bearer(Access.SignedIn).map(label).sort()).toEqual([...SIGNED_IN_ROUTES].sort());
  });

  it('answers 401 on every bearer route without a token', async () => {
    const failures: string[] = [];
    for (const route of bearer()) {
      const res = await call(t.http, route);
      if (res.status !== 401 || res.body?.success !== false) failures.push(`${label(route)} → ${res.status}`);
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 to a viewer on every write', async () => {
    const writes = bearer().filter(
      (r) => r.method !== 'GET' && r.policy?.credential === 'bearer' && r.policy.access !== Access.SignedIn,
    );
    const failures: string[] = [];
    for (const route of writes) {
      const res = await call(sessions.viewer.http, route);
      if (res.status !== 403) failures.push(`${label(route)} → ${res.status}`);
    }
    expect(failures).toEqual([]);
  });

  it('gives viewers only GET routes through Read access', () => {
    expect(
      bearer(Access.Read)
        .filter((r) => r.method !== 'GET')
        .map(label),
    ).toEqual([]);
  });

  it('answers 403 to a user on every admin-only route', async () => {
    const failures: string[] = [];
    for (const route of bearer(Access.Admin)) {
      const res = await call(sessions.user.http, route);
      if (res.status !== 403) failures.push(`${label(route)} → ${res.status}`);
    }
    expect(failures).toEqual([]);
  });

  it('lets every role through on Read routes, and user and admin through on Write routes', async () => {
    const failures: string[] = [];
    const check = async (session: Session, route: RouteEntry) => {
      const res = await call(session.http, route);
      if (res.status === 401 || res.status === 403)
        failures.push(`${session.user.role} ${label(route)} → ${res.status}`);
    };
    for (const route of bearer(Access.Read))
      for (const role of Object.values(Role)) await check(sessions[role], route);
    for (const route of bearer(Access.Write))
      for (const role of [Role.User, Role.Admin]) await check(sessions[role], route);
    for (const route of bearer(Access.Admin)) await check(sessions.admin, route);
    expect(failures).toEqual([]);
  });
});
