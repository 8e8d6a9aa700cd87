import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { quickstart } from '../clients/typescript/examples/quickstart';
import { Role } from '../src/common/auth/roles';
import { readmeExampleDiffers } from '../tools/sdk/readme-example';
import { createTestApp, TestApp } from './helpers/app';
import { createSession, TEST_PASSWORD } from './helpers/session';

const run = promisify(execFile);
const CLIENT = resolve(__dirname, '..', 'clients', 'typescript');

/**
 * The official TypeScript SDK (clients/typescript, docs/api/generated-clients.md): its README example, run
 * as written against a live server: sign in, create an app and an API key, add a want with the key, read a
 * typed 404. `npm run sdk:check` keeps its generated types equal to the document.
 */
describe('The TypeScript SDK (clients/typescript)', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
  });
  afterAll(() => t.close());

  it('shows in its README exactly the example this test runs', () => {
    const differs = readmeExampleDiffers(
      join(CLIENT, 'README.md'),
      'ts',
      join(CLIENT, 'examples', 'quickstart.ts'),
      {
        "'../src'": "'admin-service-client'",
      },
    );
    expect(differs).toBeUndefined();
  });

  it('runs the README example: a want created with the key, then a typed 404', async () => {
    const admin = await createSession(t, Role.Admin);
    const result = await quickstart(baseUrl, admin.user.email, TEST_PASSWORD, 'sdk-typescript');
    expect(result.wantId).toMatch(/^[0-9a-f]{24}$/);
    expect(result.status).toBe(404);
    expect(result.notFound).toEqual({ success: false, error: 'Want not found' });
    const stored = await admin.http.get(`/admin/sdk-typescript/wants/${result.wantId}`);
    expect(stored.body.data).toMatchObject({ title: 'Gift wrapping', category: 'checkout' });
  });

  it('builds as a package (tsc --strict, declarations)', async () => {
    const tsc = join(__dirname, '..', 'node_modules', '.bin', 'tsc');
    await expect(run(tsc, ['--noEmit', '-p', join(CLIENT, 'tsconfig.json')])).resolves.toBeDefined();
  }, 120_000);
});
