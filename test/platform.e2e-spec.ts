import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { ProbeModule } from './helpers/probe.module';

describe('Platform: envelope, errors, pagination, security headers', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ imports: [ProbeModule] });
  });
  afterAll(() => t.close());
  beforeEach(() => resetDatabase(t.connection));

  const expectError = (
    res: { status: number; body: { success: boolean; error: string } },
    status: number,
  ) => {
    expect(res.status).toBe(status);
    expect(res.body.success).toBe(false);
    expect(typeof res.body.error).toBe('string');
    expect(res.body.error.length).toBeGreaterThan(0);
  };

  it('wraps success in {success, data}', async () => {
    const res = await t.http.post('/__probe/items', { name: 'first' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, data: expect.objectContaining({ name: 'first' }) });
  });

  it('answers 400 naming the invalid and the unknown fields', async () => {
    const res = await t.http.post('/__probe/items', { count: -1, extra: true });
    expectError(res, 400);
    expect(res.body.error).toMatch(/name/);
    expect(res.body.error).toMatch(/count/);
    expect(res.body.error).toMatch(/extra should not exist/);
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await t.http.request('POST', '/__probe/items', {
      payload: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400);
    expect(res.body.error).toMatch(/JSON/);
  });

  it('answers 404 for an unknown route, with or without a trailing slash match', async () => {
    expectError(await t.http.get('/no/such/route'), 404);
    const withSlash = await t.http.get('/__probe/items/');
    expect(withSlash.status).toBe(200);
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await t.http.post('/__probe/items', { name: 'x'.repeat(1024 * 1024 + 10) });
    expectError(res, 413);
  });

  it('answers 409 for a duplicate key and names the field', async () => {
    await t.http.post('/__probe/items', { name: 'dup' });
    const res = await t.http.post('/__probe/items', { name: 'dup' });
    expectError(res, 409);
    expect(res.body.error).toMatch(/name/);
  });

  it('answers 404 for a malformed id and for an unknown id', async () => {
    expectError(await t.http.get('/__probe/items/not-an-object-id'), 404);
    expectError(await t.http.get('/__probe/items/64b7f0c2a1b2c3d4e5f60718'), 404);
  });

  it('answers 500 with an errorId and no internal detail', async () => {
    const res = await t.http.get('/__probe/boom');
    expectError(res, 500);
    expect(res.body.error).toMatch(/errorId: [0-9a-f-]{36}/);
    expect(res.text).not.toMatch(/secret internal detail/);
    expect(res.text).not.toMatch(/at .*\.ts/);
  });

  it('answers 429 with Retry-After once the limit is reached', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.9' };
    expect((await t.http.get('/__probe/throttled', { headers: ip })).status).toBe(200);
    expect((await t.http.get('/__probe/throttled', { headers: ip })).status).toBe(200);
    const res = await t.http.get('/__probe/throttled', { headers: ip });
    expectError(res, 429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  describe('pagination', () => {
    beforeEach(async () => {
      for (const name of ['a', 'b', 'c', 'd', 'e']) await t.http.post('/__probe/items', { name });
    });

    it('defaults to page 1, limit 20', async () => {
      const res = await t.http.get('/__probe/items');
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({
        page: 1,
        limit: 20,
        total: 5,
        pages: 1,
        totalCapped: false,
      });
      expect(res.body.data.map((i: { name: string }) => i.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    });

    it('accepts the last page within the 10,000 records a page may skip', async () => {
      const res = await t.http.get('/__probe/items', { query: { page: '101', limit: '100' } });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({ page: 101, limit: 100 });
    });

    it('returns the requested page', async () => {
      const res = await t.http.get('/__probe/items', { query: { page: 2, limit: 2 } });
      expect(res.body.pagination).toMatchObject({
        page: 2,
        limit: 2,
        total: 5,
        pages: 3,
        totalCapped: false,
      });
      expect(res.body.data.map((i: { name: string }) => i.name)).toEqual(['c', 'd']);
    });

    it.each([
      ['page', '0'],
      ['page', 'abc'],
      ['limit', '0'],
      ['limit', '101'],
      ['limit', '2.5'],
      // Only decimal digits in range (docs/decisions/security-hostile-input.md): no page 1e20, no hexadecimal
      // page 16.
      ['page', '99999999999999999999'],
      ['page', '10001'],
      ['page', '0x10'],
      ['page', '1e3'],
      ['page', '-1'],
      ['page', ' 2'],
      ['limit', '010'],
    ])('rejects %s=%s with 400 naming the field', async (field, value) => {
      const res = await t.http.get('/__probe/items', { query: { [field]: value } });
      expectError(res, 400);
      expect(res.body.error).toMatch(new RegExp(field));
    });
  });

  it('sets security headers and a request id', async () => {
    const res = await t.http.get('/health');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBeDefined();
    expect(res.headers['x-request-id']).toBeDefined();
    const echoed = await t.http.get('/health', { headers: { 'x-request-id': 'req-123' } });
    expect(echoed.headers['x-request-id']).toBe('req-123');
  });

  it('answers CORS preflight requests', async () => {
    const res = await t.http.request('OPTIONS', '/health', {
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });
});
