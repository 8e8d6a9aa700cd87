import { createTestApp, TestApp } from './helpers/app';

/** The directives of a Content-Security-Policy header, by name. */
function directives(header: unknown): Map<string, string> {
  return new Map(
    String(header)
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => [part.split(/\s+/)[0], part] as [string, string]),
  );
}

/**
 * Swagger UI is staff's interface wherever the service runs, also over plain http on an intranet host: its
 * pages carry no `upgrade-insecure-requests` (a browser would fetch the UI's files over https there). The
 * browser gate (npm run test:browser) opens it so; this checks the headers that make it work.
 */
describe('Swagger UI’s Content-Security-Policy', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it.each(['/docs', '/docs/', '/docs/swagger-ui-init.js', '/docs/swagger-ui.css'])(
    '%s: no upgrade of its requests to https, the rest of the policy as everywhere',
    async (path) => {
      const res = await t.http.get(path);
      expect(res.status).toBe(200);
      const policy = directives(res.headers['content-security-policy']);
      expect(policy.has('upgrade-insecure-requests')).toBe(false);
      expect(policy.get('default-src')).toBe("default-src 'self'");
      expect(policy.get('script-src')).toBe("script-src 'self' 'unsafe-inline'");
      expect(policy.get('frame-ancestors')).toBe("frame-ancestors 'self'");
    },
  );

  it('the API and the OpenAPI document keep helmet’s policy', async () => {
    for (const path of ['/health/live', '/docs-json', '/no-such-route']) {
      const policy = directives((await t.http.get(path)).headers['content-security-policy']);
      expect({ path, upgrade: policy.has('upgrade-insecure-requests') }).toEqual({ path, upgrade: true });
    }
  });
});
