import { DiscoveryModule } from '@nestjs/core';
import { Role } from '../src/common/auth/roles';
import { DEFAULT_BODY_POLICY, MAX_BODY_BYTES, PUBLIC_BODY_BYTES } from '../src/common/http/body/body-policy';
import { createTestApp, TestApp } from './helpers/app';
import { routeTable, RouteEntry, sampleUrl } from './helpers/route-table';
import { createSession, Session } from './helpers/session';

/**
 * Every route that takes a body, found by walking the route table (so a new route is covered without new
 * code), gets a corpus of hostile bodies as an admin would send them. Whatever the route does with a body,
 * none may answer 5xx, and each refusal is the error envelope.
 */
describe('Hostile bodies on every route', () => {
  let t: TestApp;
  let admin: Session;
  let routes: RouteEntry[];

  beforeAll(async () => {
    t = await createTestApp({ imports: [DiscoveryModule] });
    admin = await createSession(t, Role.Admin);
    routes = routeTable(t.app).filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method));
  });
  afterAll(() => t.close());

  const label = (r: RouteEntry) => `${r.method} ${r.path}`;
  let client = 0;
  // A client address per request: the corpus is about bodies, not about the rate limit.
  const send = (route: RouteEntry, payload: string | Buffer, contentType = 'application/json') =>
    admin.http.request(route.method as 'POST', sampleUrl(route.path), {
      payload,
      headers: {
        'content-type': contentType,
        'x-forwarded-for': `10.77.${(client += 1) >> 8}.${client % 256}`,
      },
    });

  /** Bodies that reach validation: operators, mass assignment, type confusion. */
  const corpus: Record<string, unknown> = {
    'operator injection': {
      email: { $gt: '' },
      password: { $ne: null },
      appId: { $regex: '.*' },
      status: { $in: [] },
    },
    'mass assignment': {
      _id: '000000000000000000000000',
      role: 'admin',
      isActive: true,
      tokenVersion: 0,
      appId: 'other',
      createdAt: '1970-01-01',
      __v: 9,
      publicKey: 'pk_x',
    },
    'prototype keys': { constructor: { prototype: { polluted: true } } },
    'type confusion': {
      email: ['a@b.test'],
      name: 12,
      active: 'true',
      limit: '1e9',
      tags: 'x',
      features: [],
    },
    'null everything': { email: null, name: null, subject: null, message: null, title: null, status: null },
    'arrays where objects are declared': {
      profile: [null, null],
      settings: { notifications: [null, null] },
      sender: [1],
      filters: [[]],
    },
    // class-transformer maps an array onto a DTO as an array of instances; update pipes took it for fields.
    'an array instead of an object': [],
    'an array of objects': [{ name: 'x', active: false }],
    'huge strings': { email: `${'a'.repeat(40_000)}@b.test`, name: 'n'.repeat(20_000) },
  };

  it('finds the routes with a body', () => {
    expect(routes.length).toBeGreaterThan(20);
  });

  it('keeps the bodies of routes anyone may call to 16 KiB', () => {
    const open = routes.filter((r) => ['none', 'app-key', 'end-user'].includes(r.policy?.credential ?? ''));
    expect(open.map(label)).toEqual(expect.arrayContaining(['POST /auth/login']));
    expect(open.filter((r) => r.body.maxBytes > PUBLIC_BODY_BYTES).map(label)).toEqual([]);
  });

  it.each(Object.keys(corpus))('never answers 5xx to %s', async (name) => {
    const failures: string[] = [];
    for (const route of routes) {
      const res = await send(route, JSON.stringify(corpus[name]));
      if (res.status >= 500) failures.push(`${label(route)} → ${res.status} ${res.text.slice(0, 200)}`);
      else if (res.status >= 400 && res.body?.success !== false)
        failures.push(`${label(route)} → no envelope`);
    }
    expect(failures).toEqual([]);
  });

  it('answers 400 to too deep and too wide bodies on every route, before validation (413 if over its size)', async () => {
    const deep =
      '{"a":'.repeat(DEFAULT_BODY_POLICY.maxDepth + 1) + '1' + '}'.repeat(DEFAULT_BODY_POLICY.maxDepth + 1);
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i])));
    const failures: string[] = [];
    for (const route of routes) {
      for (const body of [deep, wide]) {
        const res = await send(route, body);
        const expected = Buffer.byteLength(body) > route.body.maxBytes ? 413 : 400;
        if (res.status !== expected) failures.push(`${label(route)} → ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers 413 to a body over the largest limit, and 415 to a form post where no form is taken', async () => {
    const oversize = JSON.stringify({ a: 'x'.repeat(MAX_BODY_BYTES) });
    const failures: string[] = [];
    for (const route of routes) {
      const tooLarge = await send(route, oversize);
      if (tooLarge.status !== 413) failures.push(`${label(route)} oversize → ${tooLarge.status}`);
      const form = await send(route, 'a=1&b=2', 'application/x-www-form-urlencoded');
      if (!route.body.form && form.status !== 415) failures.push(`${label(route)} form → ${form.status}`);
    }
    expect(failures).toEqual([]);
  });

  it('bounds the form bodies of the routes that take forms like their JSON bodies', async () => {
    const formRoutes = routes.filter((route) => route.body.form);
    expect(formRoutes.map(label)).toEqual(['POST /unsubscribe/:token']);
    const failures: string[] = [];
    for (const route of formRoutes) {
      const wide = Array.from({ length: route.body.maxFields + 1 }, (_, i) => `k${i}=${i}`).join('&');
      const tooWide = await send(route, wide, 'application/x-www-form-urlencoded');
      if (tooWide.status !== 400) failures.push(`${label(route)} wide form → ${tooWide.status}`);
      const huge = await send(
        route,
        `a=${'x'.repeat(route.body.maxBytes)}`,
        'application/x-www-form-urlencoded',
      );
      if (huge.status !== 413) failures.push(`${label(route)} huge form → ${huge.status}`);
      const poisoned = await send(route, '__proto__=1&constructor=2', 'application/x-www-form-urlencoded');
      if (poisoned.status >= 500) failures.push(`${label(route)} poisoned form → ${poisoned.status}`);
    }
    expect(failures).toEqual([]);
  });
});
