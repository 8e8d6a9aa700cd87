import { DiscoveryModule } from '@nestjs/core';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { AUDITED, NOT_AUDITED } from '../src/audit/audit-actions';
import { AuditRecord } from '../src/audit/schemas/audit-record.schema';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { RouteEntry, routeTable, sampleUrl } from './helpers/route-table';
import { createSession } from './helpers/session';

/**
 * Walks the route table like the access-control test: every state-changing staff route (a bearer route
 * that is not a GET, and the sign-in) must name its audit action in src/audit/audit-actions.ts, and
 * calling it writes exactly one record with that action. A route added without one fails here.
 */
describe('Audit: every state-changing staff route writes a record', () => {
  let t: TestApp;
  let routes: RouteEntry[];
  let records: Model<AuditRecord>;

  beforeAll(async () => {
    t = await createTestApp({ imports: [DiscoveryModule] });
    routes = routeTable(t.app);
    records = t.app.get<Model<AuditRecord>>(getModelToken(AuditRecord.name));
  });
  afterAll(() => t.close());

  const label = (r: RouteEntry) => `${r.method} ${r.path} (${r.operationId ?? 'no operationId'})`;
  const stateChanging = () =>
    routes.filter(
      (r) => (r.policy?.credential === 'bearer' && r.method !== 'GET') || r.operationId === 'login',
    );

  it('names an audit action, or a reason for none, for every state-changing staff route', () => {
    const missing = stateChanging().filter(
      (r) => !r.operationId || !(r.operationId in AUDITED || r.operationId in NOT_AUDITED),
    );
    expect(missing.map(label)).toEqual([]);
  });

  it('lists no operation that is not a route (a renamed route keeps its audit)', () => {
    const known = new Set(routes.map((r) => r.operationId));
    expect([...Object.keys(AUDITED), ...Object.keys(NOT_AUDITED)].filter((id) => !known.has(id))).toEqual([]);
  });

  it('writes one record with the route’s action, actor and request id for each audited route', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((r) => r.operationId && r.operationId in AUDITED)) {
      const spec = AUDITED[route.operationId!];
      // A fresh admin per route: sign-out and session revokes end the caller's own tokens.
      const admin = await createSession(t, Role.Admin);
      const before = await records.countDocuments({ action: spec.action });
      const requestId = `audit-route-${route.operationId}`;
      const res = await admin.http.request(route.method as 'POST', sampleUrl(route.path), {
        body: {},
        headers: { 'x-request-id': requestId },
      });
      const written = await records.find({ requestId }).lean<AuditRecord[]>();
      const after = await records.countDocuments({ action: spec.action });
      const actorOk = route.operationId === 'login' || written[0]?.actorId === admin.user.id;
      if (written.length !== 1 || after !== before + 1 || !actorOk || written[0].status !== res.status) {
        failures.push(`${label(route)} → ${res.status}, ${written.length} record(s)`);
      }
    }
    expect(failures).toEqual([]);
  });
});
