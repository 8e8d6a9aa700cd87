import { Readable } from 'node:stream';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { multipart } from './helpers/multipart';
import { createSession, Session } from './helpers/session';

/**
 * The hostile-input defects (docs/decisions/security-hostile-input.md) that the shared request pipeline
 * answers, each reproduced as it was found.
 */
describe('Hostile input', () => {
  let t: TestApp;
  let admin: Session;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await createSession(t, Role.Admin);
  });
  afterAll(() => t.close());

  const json = (payload: string | Buffer) => ({ payload, headers: { 'content-type': 'application/json' } });
  const expectEnvelope = (
    res: { status: number; body: { success?: boolean; error?: unknown } },
    status: number,
  ) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ success: false, error: expect.any(String) });
  };

  describe('size, fields and depth are bounded before validation', () => {
    it('answers 413 to an 880 KB login body of 95,000 unknown keys, from its length alone', async () => {
      const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 95_000 }, (_, i) => [`k${i}`, i])));
      expect(wide.length).toBeGreaterThan(800_000);
      const res = await t.http.request('POST', '/auth/login', json(wide));
      expectEnvelope(res, 413);
      expect(res.text.length).toBeLessThan(300);
    });

    it('answers 400 to more fields than allowed, naming the limit', async () => {
      const body = JSON.stringify(Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`k${i}`, i])));
      const res = await admin.http.request('POST', '/users', json(body));
      expectEnvelope(res, 400);
      expect(res.body.error).toBe('Request body has more than 1000 fields');
    });

    it('names the first few unknown fields and counts the rest', async () => {
      const body = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`extra${i}`, i]));
      const res = await admin.http.post('/users', { ...body });
      expectEnvelope(res, 400);
      expect(res.body.error).toMatch(/; and \d+ more$/);
      expect(res.body.error.length).toBeLessThan(400);
    });

    it.each(['/auth/login', '/users'])('answers 400 to 2,350 levels of nesting on %s', async (url) => {
      const deep = '{"a":'.repeat(2_350) + '1' + '}'.repeat(2_350);
      const res = await admin.http.request('POST', url, json(deep));
      expectEnvelope(res, 400);
      expect(res.body.error).toBe('Request body is nested deeper than 16 levels');
    });

    it('answers 413 to a chunked body over the route limit (no Content-Length to trust)', async () => {
      const body = JSON.stringify({ email: 'a@b.test', password: 'x'.repeat(20_000) });
      // A stream payload is sent without a Content-Length, so only the read length can refuse it.
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/login',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        payload: Readable.from([body]),
      });
      expect(res.statusCode).toBe(413);
      expect(JSON.parse(res.body)).toEqual({
        success: false,
        error: expect.stringMatching(/at most 16384 bytes/),
      });
    });
  });

  describe('content types', () => {
    it.each([
      ['application/x-www-form-urlencoded', 'email=a%40b.test&password=secret1'],
      ['text/plain', '{"email":"a@b.test","password":"secret1"}'],
      ['application/xml', '<login/>'],
    ])('answers 415 to %s on a JSON route', async (type, payload) => {
      const res = await t.http.request('POST', '/auth/login', { payload, headers: { 'content-type': type } });
      expectEnvelope(res, 415);
    });

    it('answers 415 to multipart on a route that does not take it', async () => {
      const { payload, headers } = multipart({ email: 'a@b.test', password: 'secret1' });
      expectEnvelope(await t.http.request('POST', '/auth/login', { payload, headers }), 415);
    });

    it('answers 400 to multipart without a boundary where multipart is taken', async () => {
      const app = await seedApp(t);
      const res = await admin.http.request('POST', `/${app.id}/tickets`, {
        payload: 'whatever',
        headers: { 'content-type': 'multipart/form-data' },
      });
      expectEnvelope(res, 400);
      expect(res.body.error).toMatch(/boundary/);
    });

    it('answers 400 to a multipart field declared as JSON that is not JSON', async () => {
      const app = await seedApp(t);
      const boundary = 'x-boundary';
      const payload =
        `--${boundary}\r\nContent-Disposition: form-data; name="email"\r\nContent-Type: application/json\r\n\r\n` +
        `{not json\r\n--${boundary}--\r\n`;
      const res = await admin.http.request('POST', `/${app.id}/tickets`, {
        payload,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      expectEnvelope(res, 400);
    });

    it('answers 400 to prototype-poisoning keys', async () => {
      const res = await t.http.request(
        'POST',
        '/auth/login',
        json('{"__proto__":{"admin":true},"email":"a@b.c"}'),
      );
      expectEnvelope(res, 400);
      expect(res.body.error).toBe('Request body contains a forbidden property name');
    });

    it('answers 400 to invalid UTF-8 in a JSON body, and stores nothing', async () => {
      const payload = Buffer.concat([
        Buffer.from('{"email":"utf8-'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('@example.com","password":"secret12","firstName":"A","lastName":"B","role":"user"}'),
      ]);
      const res = await admin.http.request('POST', '/users', json(payload));
      expectEnvelope(res, 400);
      expect(res.body.error).toBe('Request body is not valid UTF-8');
      expect(await t.connection.db!.collection('users').countDocuments({ email: /^utf8-/ })).toBe(0);
    });
  });

  describe('search strings', () => {
    it('finds a NUL byte literally instead of failing to encode the pattern (it was a 500)', async () => {
      const app = await seedApp(t);
      const searches = [
        '/admin/contacts',
        '/admin/templates',
        '/api-keys',
        '/tickets',
        `/admin/${app.id}/newsletter/subscribers`,
      ];
      for (const path of searches) {
        const res = await admin.http.get(path, { query: { search: 'a\u0000b' } });
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        expect(res.body.data).toEqual([]);
      }
    });
  });
});
