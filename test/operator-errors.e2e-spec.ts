import { RESERVED_APP_IDS } from '../src/apps/reserved-app-ids';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { routeTable } from './helpers/route-table';
import { createSessions, Session } from './helpers/session';

/**
 * Where an operator's mistake used to surface as a puzzle: an app id that shadows routes, an API key that
 * cannot be shown after `APP_SECRET` changed, and two statuses for "unknown app".
 */
describe('Operator errors made clear', () => {
  let t: TestApp;
  let admin: Session;

  beforeAll(async () => {
    t = await createTestApp();
    ({ admin } = await createSessions(t));
  });
  afterAll(() => t.close());

  describe('app ids that would shadow routes', () => {
    /**
     * The fixed words beside an `:appId` segment: at the position where some route has `:appId`, every
     * fixed segment of a route with the same segments before it (e.g. `admin`, `tickets` at the top,
     * `apps`, `templates` after `/admin/`). Swagger's `/docs` and `/docs-json` are not Nest routes.
     */
    const shadowedWords = () => {
      const paths = routeTable(t.app).map((route) => route.path.split('/').filter(Boolean));
      const words = new Set(['docs', 'docs-json']);
      for (const withApp of paths) {
        const at = withApp.indexOf(':appId');
        if (at < 0) continue;
        const prefix = withApp.slice(0, at).join('/');
        for (const other of paths) {
          const word = other[at];
          if (word && !word.startsWith(':') && other.slice(0, at).join('/') === prefix) words.add(word);
        }
      }
      return [...words].sort();
    };

    it('reserves every fixed word that an app route would collide with (derived from the route table)', () => {
      const derived = shadowedWords();
      expect(derived).toEqual(
        expect.arrayContaining(['admin', 'apps', 'auth', 'health', 'templates', 'tickets']),
      );
      expect(derived.filter((word) => !RESERVED_APP_IDS.includes(word))).toEqual([]);
    });

    it.each(RESERVED_APP_IDS.map((id) => [id]))(
      'refuses to create an app called %s (400 naming id)',
      async (id) => {
        const res = await admin.http.post('/admin/apps', { id, name: 'Shadow' });
        expect(res.status).toBe(400);
        expect(res.body.success).toBe(false);
        expect(res.body.error).toMatch(/^id must not be a route name of the service \(/);
      },
    );

    it('still accepts ids that merely contain a route name', async () => {
      for (const id of ['admin-shop', 'my-tickets', 'healthy']) {
        expect((await admin.http.post('/admin/apps', { id, name: id })).status).toBe(201);
      }
    });
  });

  describe('one status for an unknown app: 404 "App not found"', () => {
    const notFound = { success: false, error: 'App not found' };

    it.each([
      ['POST /api-keys', '/api-keys', { appId: 'ghost', name: 'Server' }],
      [
        'POST /admin/chat-routing',
        '/admin/chat-routing',
        { appId: 'ghost', channel: 'tickets', webhookUrl: 'https://chat.example.com/hook' },
      ],
      [
        'POST /admin/templates',
        '/admin/templates',
        { appId: 'ghost', name: 'welcome', subject: 'Hi', htmlTemplate: '<p>Hi</p>', textTemplate: 'Hi' },
      ],
      [
        'POST /admin/{appId}/newsletter/campaigns',
        '/admin/ghost/newsletter/campaigns',
        { name: 'Launch', subject: 'News', htmlContent: '<p>News</p>' },
      ],
      [
        'POST /{appId}/tickets',
        '/ghost/tickets',
        { email: 'ada@example.com', subject: 'Help', message: 'Please' },
      ],
    ])('%s answers 404 for an app that does not exist', async (_name, url, body) => {
      const res = await admin.http.post(url, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
    });

    it.each([
      ['POST /auth/magic-link', '/auth/magic-link', { email: 'ada@example.com', appId: 'ghost' }],
      [
        'POST /{appId}/feedback',
        '/ghost/feedback',
        { type: 'bug', subject: 'Crash', message: 'It crashes.' },
      ],
    ])('public %s answers 404 for an app that does not exist', async (_name, url, body) => {
      const res = await t.http.post(url, body, { headers: { 'x-forwarded-for': '203.0.113.7' } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
    });

    it('every GET and DELETE route with {appId} in its path answers 404 for an unknown app', async () => {
      const answers: string[] = [];
      for (const route of routeTable(t.app)) {
        // KEY and publishable-key routes check the credential first: a key of no app cannot name it.
        if (!route.path.includes(':appId') || (route.policy?.credential ?? 'bearer') !== 'bearer') continue;
        if (route.method !== 'GET' && route.method !== 'DELETE') continue;
        const url = route.path.replace(':appId', 'ghost').replace(/:[A-Za-z]+/g, '0123456789abcdef01234567');
        // The bulk delete takes its ids in the body.
        const body =
          route.method === 'DELETE' && !/:[A-Za-z]+$/.test(route.path)
            ? { ids: ['0123456789abcdef01234567'] }
            : undefined;
        const res = await admin.http.request(route.method, url, body ? { body } : {});
        answers.push(`${route.method} ${route.path} ${res.status}`);
      }
      expect(answers.length).toBeGreaterThan(15);
      expect(answers.filter((answer) => !answer.endsWith(' 404'))).toEqual([]);
    });

    it('documents the 404 on every route that takes an app id in its body or path and refuses unknown apps', async () => {
      const doc = (await t.http.get('/docs-json')).body;
      for (const [path, method] of [
        ['/api-keys', 'post'],
        ['/admin/chat-routing', 'post'],
        ['/admin/templates', 'post'],
        ['/auth/magic-link', 'post'],
        ['/admin/{appId}/newsletter/campaigns', 'post'],
        ['/{appId}/tickets', 'post'],
        ['/{appId}/feedback', 'post'],
      ]) {
        expect([path, method, Object.keys(doc.paths[path][method].responses)]).toEqual([
          path,
          method,
          expect.arrayContaining(['404']),
        ]);
      }
    });
  });

  describe('an API key sealed under another APP_SECRET', () => {
    const firstSecret = process.env.APP_SECRET;
    afterAll(async () => {
      // Back to the file's secret for whatever runs after.
      await t.close();
      process.env.APP_SECRET = firstSecret;
      t = await createTestApp();
    });

    it('answers 409 naming the cause, keeps the key working, and shows a regenerated value', async () => {
      const app = await seedApp(t);
      const created = await admin.http.post('/api-keys', { appId: app.id, name: 'Server' });
      expect(created.status).toBe(201);
      const { _id: keyId, key: value } = created.body.data as { _id: string; key: string };

      // The operator changes APP_SECRET and restarts.
      await t.close();
      process.env.APP_SECRET = 'another-secret-that-is-also-at-least-thirty-two-characters';
      t = await createTestApp();
      ({ admin } = await createSessions(t));

      const read = await admin.http.get(`/api-keys/${keyId}`);
      expect(read.status).toBe(409);
      expect(read.body).toEqual({ success: false, error: expect.stringMatching(/different APP_SECRET/) });
      expect(read.body.error).toMatch(/regenerate/i);
      expect(read.text).not.toContain(value);

      // Requests check the key's hash, not its sealed copy: the key still works.
      const used = await t.http.post(
        `/${app.id}/newsletter/subscribe`,
        { email: 'reader@example.com' },
        { headers: { 'x-api-key': value } },
      );
      expect(used.status).toBe(201);

      const regenerated = await admin.http.post(`/api-keys/${keyId}/regenerate`);
      expect(regenerated.status).toBe(200);
      const shown = await admin.http.get(`/api-keys/${keyId}`);
      expect(shown.status).toBe(200);
      expect(shown.body.data.key).toBe(regenerated.body.data.key);
    });

    it('documents the 409 on GET /api-keys/{keyId}', async () => {
      const doc = (await t.http.get('/docs-json')).body;
      expect(doc.paths['/api-keys/{keyId}'].get.responses['409']).toBeDefined();
    });
  });
});
