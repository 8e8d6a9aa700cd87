import { createTestApp, TestApp } from './helpers/app';

describe('GET /health and the OpenAPI document', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('reports status, uptime, memory and the database', async () => {
    const res = await t.http.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      timestamp: expect.any(String),
      uptime: expect.any(Number),
      memory: { rss: expect.any(String), heapUsed: expect.any(String), heapTotal: expect.any(String) },
      database: { connected: true, modelsCount: expect.any(Number) },
    });
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
  });

  it('serves Swagger UI at /docs and the document at /docs-json with the four security schemes', async () => {
    const ui = await t.http.get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toMatch(/swagger/i);
    const doc = await t.http.get('/docs-json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.components.securitySchemes).sort()).toEqual([
      'api-key',
      'app-key',
      'bearer',
      'end-user',
    ]);
    expect(doc.body.components.securitySchemes['api-key']).toMatchObject({ in: 'header', name: 'X-API-Key' });
    expect(doc.body.components.securitySchemes['app-key']).toMatchObject({ in: 'header', name: 'X-App-Key' });
  });

  it('documents a response schema for every route (envelope included)', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const missing: string[] = [];
    for (const [path, item] of Object.entries<
      Record<string, { responses: Record<string, { content?: unknown }> }>
    >(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const success = Object.entries(operation.responses).filter(([code]) => /^2\d\d$/.test(code));
        const documented = success.some(([, response]) => response.content);
        // A redirect's answer is its Location header (the click-tracking route has no 2xx).
        const redirects =
          success.length === 0 && Object.keys(operation.responses).some((code) => /^3\d\d$/.test(code));
        if (!documented && !redirects) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each([
    ['/users', 'isActive'],
    ['/api-keys', 'isActive'],
    ['/admin/templates', 'isActive'],
    ['/admin/apps', 'activeOnly'],
  ])('documents the %s query flag %s as a boolean', async (path, name) => {
    const doc = (await t.http.get('/docs-json')).body;
    const parameter = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
    expect(parameter).toMatchObject({ in: 'query', required: false, schema: { type: 'boolean' } });
  });
});
