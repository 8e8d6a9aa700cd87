import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { createSession, Session, TEST_PASSWORD } from './helpers/session';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/**
 * A client program as an app developer writes one against the generated types: sign in, create an app and
 * a key, then, as the app's backend, create a want, list the wants and read an unknown one. It sets the
 * admin token on every call of its admin client (openapi-fetch has no per-operation credentials), and
 * sends the key beside it once: an API-key route must not mistake that token for an end user's. Every
 * value it reads is typed by the document; `tsc --strict` refuses it if the document and the flow disagree.
 */
const CLIENT_PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type ErrorEnvelope = components['schemas']['ErrorSchema'];

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(what + ' failed');
  return value;
}

async function main(): Promise<void> {
  const baseUrl = required(process.env.BASE_URL, 'BASE_URL');
  const appId = required(process.env.APP_ID, 'APP_ID');
  const anonymous = createClient<paths>({ baseUrl });
  const login = await anonymous.POST('/auth/login', {
    body: { email: required(process.env.EMAIL, 'EMAIL'), password: required(process.env.PASSWORD, 'PASSWORD') },
  });
  const token: string = required(login.data, 'sign-in').token;
  const admin = createClient<paths>({ baseUrl, headers: { Authorization: 'Bearer ' + token } });

  const app = await admin.POST('/admin/apps', { body: { id: appId, name: 'Generated client', active: true } });
  const createdAppId: string = required(app.data, 'create app').data.id;
  const key = await admin.POST('/api-keys', { body: { appId: createdAppId, name: 'Generated client backend' } });
  const secret: string = required(key.data, 'create key').data.key;

  const backend = createClient<paths>({ baseUrl, headers: { 'X-API-Key': secret } });
  const path = { appId: createdAppId };
  const want = await backend.POST('/{appId}/wants', {
    params: { path },
    body: { title: 'Dark mode', description: 'For the night shift', category: 'ui' },
  });
  const wantId: string = required(want.data, 'create want').data._id;
  const listed = await backend.GET('/{appId}/wants', { params: { path, query: { sort: 'newest' } } });
  const page = required(listed.data, 'list wants');
  const titles: string[] = page.data.map((item) => item.title);

  const both = createClient<paths>({ baseUrl, headers: { Authorization: 'Bearer ' + token, 'X-API-Key': secret } });
  const withAdminToken = await both.GET('/{appId}/wants', { params: { path } });

  const missing = await backend.GET('/{appId}/wants/{id}', {
    params: { path: { ...path, id: '0123456789abcdef01234567' } },
  });
  const notFound: ErrorEnvelope = required(missing.error, 'the 404');

  console.log(
    JSON.stringify({
      user: required(login.data, 'sign-in').user.email,
      appId: createdAppId,
      keyPrefix: secret.slice(0, 3),
      wantId,
      titles,
      total: page.pagination.total,
      withAdminToken: withAdminToken.response.status,
      notFound: { status: missing.response.status, body: notFound },
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

/**
 * The generated-client gate (docs/api/generated-clients.md): the document of the running server, linted with
 * Redocly's recommended rules, turned into TypeScript types by openapi-typescript, a client program
 * type-checked against them with `--strict`, and that program run with openapi-fetch against the live server.
 */
describe('A client generated from /docs-json', () => {
  let t: TestApp;
  let baseUrl: string;
  let dir: string;
  let admin: Session;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
    admin = await createSession(t, Role.Admin);
    dir = await mkdtemp(join(tmpdir(), 'generated-client-'));
    // The program resolves openapi-fetch (and tsc its types) from the project's packages.
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const document = await (await fetch(`${baseUrl}/docs-json`)).text();
    await writeFile(join(dir, 'openapi.json'), document);
  });
  afterAll(async () => {
    await t.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('passes Redocly’s recommended rules with no error', async () => {
    const lint = await run(
      bin('redocly'),
      ['lint', '--extends', 'recommended', '--format', 'json', join(dir, 'openapi.json')],
      { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(lint.stdout) as {
      problems: { severity: string; ruleId: string; message: string }[];
    };
    const errors = report.problems.filter((problem) => problem.severity === 'error');
    expect(errors.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
  }, 120_000);

  it('generates types a strict client program compiles against, and that program runs the flow', async () => {
    await run(bin('openapi-typescript'), [join(dir, 'openapi.json'), '--output', join(dir, 'schema.d.ts')]);
    await writeFile(join(dir, 'client.ts'), CLIENT_PROGRAM);
    await run(
      bin('tsc'),
      ['--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022'].concat([
        '--types',
        'node',
        '--skipLibCheck',
        '--outDir',
        join(dir, 'out'),
        join(dir, 'client.ts'),
      ]),
      { cwd: dir },
    ).catch((error: { stdout?: string }) => {
      throw new Error(`tsc --strict refused the client program:\n${error.stdout ?? ''}`);
    });

    const flow = await run(process.execPath, [join(dir, 'out', 'client.js')], {
      cwd: dir,
      env: {
        ...process.env,
        BASE_URL: baseUrl,
        EMAIL: admin.user.email,
        PASSWORD: TEST_PASSWORD,
        APP_ID: 'generated-client',
      },
    });
    const result = JSON.parse(flow.stdout) as Record<string, unknown>;
    expect(result).toEqual({
      user: admin.user.email,
      appId: 'generated-client',
      keyPrefix: 'sk_',
      wantId: expect.stringMatching(/^[0-9a-f]{24}$/),
      titles: ['Dark mode'],
      total: 1,
      withAdminToken: 200,
      notFound: { status: 404, body: { success: false, error: 'Want not found' } },
    });
  }, 120_000);
});
