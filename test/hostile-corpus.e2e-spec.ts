import { DiscoveryModule } from '@nestjs/core';
import { Role } from '../src/common/auth/roles';
import { DEFAULT_BODY_POLICY, MAX_BODY_BYTES, PUBLIC_BODY_BYTES } from '../src/common/http/body/body-policy';
import { createTestApp, TestApp } from './helpers/app';
import { routeTable, RouteEntry, sampleUrl } from './helpers/route-table';
import { seedApiKey, seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { TEMPLATE_BOMBS } from './helpers/template-bombs';

const TEMPLATE_FIELDS = ['subject', 'htmlTemplate', 'textTemplate', 'htmlContent', 'textContent'];
/** The template bombs at a fifth of their size or less, so five copies fit the smallest template route. */
const CORPUS_BOMBS = {
  partials: TEMPLATE_BOMBS.partials,
  'log and a literal': `{{log "}}" ${'a.b.c.d '.repeat(1_200)}}}`,
  literal: `{{lookup "}}" ${'a.b.c.d '.repeat(1_200)}}}`,
  'deep nesting': '{{#if a}}x'.repeat(600) + '{{/if}}'.repeat(600),
  loops: TEMPLATE_BOMBS.loops,
};

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
  /** Routes that end the caller's own session: each call gets a session of its own, so admin stays valid. */
  const ENDS_OWN_SESSION = new Set(['/auth/logout']);
  const send = async (route: RouteEntry, payload: string | Buffer, contentType = 'application/json') => {
    const caller = ENDS_OWN_SESSION.has(route.path) ? await createSession(t, Role.Admin) : admin;
    return caller.http.request(route.method as 'POST', sampleUrl(route.path), {
      payload,
      headers: {
        'content-type': contentType,
        'x-forwarded-for': `10.77.${(client += 1) >> 8}.${client % 256}`,
      },
    });
  };

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
    // Every template field of every template route at once, each bomb small enough for a 64 KiB body.
    ...Object.fromEntries(
      Object.entries(CORPUS_BOMBS).map(([name, source]) => [
        `a template bomb (${name})`,
        Object.fromEntries(TEMPLATE_FIELDS.map((field) => [field, source])),
      ]),
    ),
  };

  /**
   * Addresses the one address rule refuses, all under one marker domain so a stored copy can be found:
   * quoted local parts (with CRLF), control characters, header injection, dot games, non-ASCII, over 254.
   */
  const MARKER = 'hostile-address.test';
  const hostileAddresses = [
    `"a b"@${MARKER}`,
    `"a\r\nb"@${MARKER}`,
    `a\u0001b@${MARKER}`,
    `a\u0000@${MARKER}`,
    `x@${MARKER}\r\nBcc: victim@example.com`,
    `a..b@${MARKER}`,
    `.a@${MARKER}`,
    `a@${MARKER}.`,
    `josé@${MARKER}`,
    `Ada <ada@${MARKER}>`,
    `a@b.${MARKER},c@d.${MARKER}`,
    `${'a'.repeat(65)}@${MARKER}`,
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(41)}.${MARKER}`,
  ];

  /**
   * Every address field (`email`, `authorEmail`, …) of a JSON value set to `address`; null when it has none.
   */
  function withAddress(value: unknown, address: string): unknown {
    if (Array.isArray(value)) {
      const items = value.map((item) => withAddress(item, address));
      return items.some((item) => item !== null) ? items.map((item, i) => item ?? value[i]) : null;
    }
    if (typeof value !== 'object' || value === null) return null;
    let found = false;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      const nested = /email$/i.test(key) && typeof field === 'string' ? address : withAddress(field, address);
      found ||= nested !== null;
      copy[key] = nested ?? field;
    }
    return found ? copy : null;
  }

  it('refuses hostile addresses in every address field of every documented body, storing none of them', async () => {
    expect(hostileAddresses[hostileAddresses.length - 1]).toHaveLength(255);
    // Real credentials of every kind and a real app, so each request gets as far as its body is valid.
    const app = await seedApp(t, { allowedOrigins: ['https://www.shop.test'] });
    const credentials: Record<string, Record<string, string>> = {
      bearer: { authorization: `Bearer ${admin.token}` },
      'api-key': { 'x-api-key': (await seedApiKey(t, app.id)).value },
      'app-key': { 'x-app-key': app.publicKey, origin: 'https://www.shop.test' },
    };
    const credentialOf = (path: string) =>
      routes.find((route) => route.path === path.replace(/\{([A-Za-z]+)\}/g, ':$1'))?.policy?.credential;
    type Operation = { requestBody?: { content: Record<string, { example?: unknown }> } };
    const doc = (await t.http.get('/docs-json')).body as { paths: Record<string, Record<string, Operation>> };
    const targets = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) => {
        const example = operation.requestBody?.content['application/json']?.example;
        const url = path.replace('{appId}', app.id).replace(/\{[A-Za-z]+\}/g, '0123456789abcdef01234567');
        return withAddress(example, 'x@example.com') === null
          ? []
          : [
              {
                name: `${method.toUpperCase()} ${path}`,
                method: method.toUpperCase(),
                url,
                example,
                headers: credentials[credentialOf(path) ?? 'bearer'] ?? {},
              },
            ];
      }),
    );
    const request = (target: (typeof targets)[number], body: unknown) =>
      t.http.request(target.method as 'POST', target.url, {
        body,
        headers: { ...target.headers, 'x-forwarded-for': `10.78.${(client += 1) >> 8}.${client % 256}` },
      });

    // An import reports invalid entries one by one instead of refusing the file.
    const importRoute = 'POST /admin/{appId}/newsletter/subscribers/import';
    const failures: string[] = [];
    for (const address of hostileAddresses) {
      for (const target of targets) {
        const res = await request(target, withAddress(target.example, address));
        const refused =
          target.name === importRoute
            ? res.status === 200 && res.body.data.imported === 0
            : res.status === 400 && String(res.body?.error).includes('must be an email address');
        if (!refused) failures.push(`${target.name} ${JSON.stringify(address)} → ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
    const stored: string[] = [];
    for (const collection of await t.connection.db!.collections()) {
      for (const doc of await collection.find().toArray()) {
        if (JSON.stringify(doc).toLowerCase().includes(MARKER)) stored.push(collection.collectionName);
      }
    }
    expect(stored).toEqual([]);

    // The same bodies with their own addresses get through (those whose documented example is complete).
    const accepted: string[] = [];
    for (const target of targets) {
      if ((await request(target, target.example)).status < 300) accepted.push(target.name);
    }
    expect(accepted).toEqual(
      expect.arrayContaining([
        'POST /{appId}/newsletter/subscribe',
        'POST /users',
        'POST /{appId}/wants',
        'POST /{appId}/feedback',
        'POST /admin/templates',
      ]),
    );
  });

  it('finds the routes with a body', () => {
    expect(routes.length).toBeGreaterThan(20);
  });

  it('keeps the bodies of routes anyone may call to 16 KiB', () => {
    const open = routes.filter((r) => ['none', 'app-key', 'end-user'].includes(r.policy?.credential ?? ''));
    expect(open.map(label)).toEqual(expect.arrayContaining(['POST /auth/login']));
    expect(open.filter((r) => r.body.maxBytes > PUBLIC_BODY_BYTES).map(label)).toEqual([]);
  });

  // A template bomb costs each template route up to the template budget per field (template-limits.ts).
  it.each(Object.keys(corpus))(
    'never answers 5xx to %s',
    async (name) => {
      const failures: string[] = [];
      for (const route of routes) {
        const res = await send(route, JSON.stringify(corpus[name]));
        if (res.status >= 500) failures.push(`${label(route)} → ${res.status} ${res.text.slice(0, 200)}`);
        else if (res.status >= 400 && res.body?.success !== false)
          failures.push(`${label(route)} → no envelope`);
      }
      expect(failures).toEqual([]);
    },
    180_000,
  );

  it('answers 400 to too deep and too wide bodies on every route, before validation (413 if over its size, 401 unsigned on a signed route or without its key)', async () => {
    const deep =
      '{"a":'.repeat(DEFAULT_BODY_POLICY.maxDepth + 1) + '1' + '}'.repeat(DEFAULT_BODY_POLICY.maxDepth + 1);
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i])));
    const failures: string[] = [];
    for (const route of routes) {
      for (const body of [deep, wide]) {
        const res = await send(route, body);
        // A signed route (rawBody) checks the signature before parsing: an unsigned body is 401, unparsed.
        const tooLarge = Buffer.byteLength(body) > route.body.maxBytes;
        const expected = tooLarge ? 413 : route.body.rawBody ? 401 : 400;
        // The admin's token is no API key or publishable key: once such a route is known, its 401 comes
        // before the body is read (docs/decisions/auth-certain-refusals-before-nest.md).
        const keyRoute = ['api-key', 'app-key'].includes(route.policy?.credential ?? '');
        const refusedFirst = !tooLarge && keyRoute && res.status === 401;
        if (res.status !== expected && !refusedFirst) failures.push(`${label(route)} → ${res.status}`);
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
    expect(formRoutes.map(label)).toEqual(['POST /joinlist/confirm/:token', 'POST /unsubscribe/:token']);
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
