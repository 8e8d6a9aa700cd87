import { crypto } from '@otplib/plugin-crypto-node';
import { generate } from '@otplib/totp';
import { CREDENTIAL_CHANNEL } from '../src/common/credentials/credential-changes';
import { callApi, startApi, type ApiAnswer, type ApiProcess } from './helpers/api-process';
import { startRedis, type TestRedis } from './helpers/redis';
import { waitFor } from './helpers/wait';
import {
  compileWorker,
  killAll,
  type CompiledWorker,
  type WorkerEnv,
  COMPILE_HOOK_MS,
} from './helpers/worker-process';

const ADMIN = { email: 'cache-admin@example.com', password: 'cache-admin-password' };
const ORIGIN = 'https://shop.example.com';

/** The authenticator app's code for a base32 secret. */
function codeFor(base32Secret: string): Promise<string> {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of base32Secret) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const bytes = Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
  return generate({ secret: bytes, crypto, epoch: Math.floor(Date.now() / 1000) });
}

/**
 * Cached credentials on two API processes over one database, with and without Redis (docs/architecture.md
 * "Credentials and roles"): instance B serves a key or a user from its cache, instance A revokes it, and B
 * refuses it shortly after. The test polls B until it refuses (the bound, one second, is the design's; a
 * bench measures speed, a test only the outcome). Each credential is used on B before the change, so B holds
 * it in its cache when A changes it.
 */
let compiled: CompiledWorker;
// Compiled once for both halves; a loaded machine's tsc run may take minutes.
beforeAll(async () => {
  compiled = await compileWorker();
}, 600_000);

describe.each([
  ['without Redis (the stamps are read at most a second apart)', false],
  ['with Redis (the change is published)', true],
])('Revocation reaches the other instance: %s', (_mode, withRedis) => {
  let redis: TestRedis | undefined;
  let a: ApiProcess;
  let b: ApiProcess;
  let admin: Record<string, string>;
  let client = 0;
  const suffix = withRedis ? 'redis' : 'stamps';
  /** A client address per request: no limit of the throttler plays a part. */
  const nextClient = () => `10.43.${withRedis ? 1 : 2}.${(client += 1) % 250}`;

  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    const env: WorkerEnv = {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: 'smtp://127.0.0.1:9',
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      BCRYPT_COST: '4',
      CHAT_WORKER_ENABLED: 'false',
      EMAIL_WORKER_ENABLED: 'false',
      TRUST_PROXY: 'true',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...(redis ? { REDIS_URL: redis.url } : {}),
    };
    // A generous start-up wait: four processes of this file and the rest of the run share the cores.
    [a, b] = await Promise.all([
      startApi(compiled, 'api-a', env, 150_000),
      startApi(compiled, 'api-b', env, 150_000),
    ]);
    admin = await signIn(ADMIN.email, ADMIN.password);
  }, COMPILE_HOOK_MS);
  afterAll(async () => {
    await killAll([a, b].filter(Boolean));
    await redis?.close();
  });
  async function signIn(email: string, password: string, code?: string): Promise<Record<string, string>> {
    const login = await callApi(a.baseUrl, 'POST', '/auth/login', {
      body: { email, password, ...(code ? { code } : {}) },
      headers: { 'x-forwarded-for': nextClient() },
    });
    expect(login.status).toBe(200);
    return { authorization: `Bearer ${login.body.token}` };
  }
  const call = (
    instance: ApiProcess,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ) =>
    callApi(instance.baseUrl, method, path, {
      headers: { ...headers, 'x-forwarded-for': nextClient() },
      body,
    });
  const me = (instance: ApiProcess, headers: Record<string, string>) =>
    call(instance, 'GET', '/auth/me', headers);

  /** Asks B until it answers `status` (the change reached it), then checks A answers the same. */
  async function refusedOnBoth(ask: (instance: ApiProcess) => Promise<ApiAnswer>, status: number) {
    let last: ApiAnswer | undefined;
    await waitFor(async () => (last = await ask(b)).status === status, {
      intervalMs: 50,
      describe: () => `B still answers ${JSON.stringify(last)}\n${b.output().slice(-2_000)}`,
    });
    expect((await ask(a)).status).toBe(status);
  }

  /** B answers 200 twice: the second answer came from its cache. */
  async function cachedOnB(ask: (instance: ApiProcess) => Promise<ApiAnswer>, status = 200) {
    expect((await ask(b)).status).toBe(status);
    expect((await ask(b)).status).toBe(status);
  }

  async function createApp(id: string): Promise<string> {
    const app = await call(a, 'POST', '/admin/apps', admin, { id, name: id, allowedOrigins: [ORIGIN] });
    expect(app.status).toBe(201);
    return app.body.data.publicKey as string;
  }

  async function createUser(email: string, role = 'user'): Promise<string> {
    const created = await call(a, 'POST', '/users', admin, {
      email,
      password: 'cache-user-password',
      firstName: 'Cache',
      lastName: 'User',
      role,
    });
    expect(created.status).toBe(201);
    return created.body.data._id as string;
  }

  it('listens on the Redis channel on both instances', async () => {
    if (!redis) return;
    const [, subscribers] = (await redis.client().pubsub('NUMSUB', CREDENTIAL_CHANNEL)) as [string, number];
    expect(Number(subscribers)).toBe(2);
  });

  it('an API key revoked or regenerated on A is refused by B', async () => {
    const appId = `keys-${suffix}`;
    await createApp(appId);
    const create = async () => {
      const created = await call(a, 'POST', '/api-keys', admin, { appId, name: 'Backend' });
      expect(created.status).toBe(201);
      return { id: created.body.data._id as string, value: created.body.data.key as string };
    };
    const wants = (value: string) => (instance: ApiProcess) =>
      call(instance, 'GET', `/${appId}/wants`, { 'x-api-key': value });

    const revoked = await create();
    await cachedOnB(wants(revoked.value));
    expect((await call(a, 'POST', `/api-keys/${revoked.id}/revoke`, admin)).status).toBe(200);
    await refusedOnBoth(wants(revoked.value), 403);

    const regenerated = await create();
    await cachedOnB(wants(regenerated.value));
    const renewed = await call(a, 'POST', `/api-keys/${regenerated.id}/regenerate`, admin);
    expect(renewed.status).toBe(200);
    await refusedOnBoth(wants(regenerated.value), 401);
    expect((await wants(renewed.body.data.key as string)(b)).status).toBe(200);

    // Switching the app off refuses its keys, although the key itself did not change.
    const working = await create();
    await cachedOnB(wants(working.value));
    expect((await call(a, 'POST', `/admin/apps/${appId}/toggle`, admin)).status).toBe(200);
    await refusedOnBoth(wants(working.value), 403);
  });

  it('a publishable key rotated on A is refused by B', async () => {
    const appId = `pages-${suffix}`;
    const publicKey = await createApp(appId);
    // An invalid address: 400 once the key is accepted, so nothing is signed up.
    const signup = (key: string) => (instance: ApiProcess) =>
      call(instance, 'POST', '/joinlist', { 'x-app-key': key, origin: ORIGIN }, { email: 'not-an-address' });
    await cachedOnB(signup(publicKey), 400);
    const rotated = await call(a, 'POST', `/admin/apps/${appId}/rotate-key`, admin);
    expect(rotated.status).toBe(200);
    await refusedOnBoth(signup(publicKey), 403);
    expect((await signup(rotated.body.data.publicKey as string)(b)).status).toBe(400);
  });

  it('signing out, an admin’s session revoke and a password change on A end the token on B', async () => {
    const email = `sessions-${suffix}@example.com`;
    await createUser(email);
    const signedOut = await signIn(email, 'cache-user-password');
    const kept = await signIn(email, 'cache-user-password');
    await cachedOnB((instance) => me(instance, signedOut));
    expect((await call(a, 'POST', '/auth/logout', signedOut)).status).toBe(200);
    await refusedOnBoth((instance) => me(instance, signedOut), 401);
    expect((await me(b, kept)).status).toBe(200);

    const id = (await me(a, kept)).body.user.id as string;
    expect((await call(a, 'POST', `/users/${id}/sessions/revoke`, admin)).status).toBe(200);
    await refusedOnBoth((instance) => me(instance, kept), 401);

    const again = await signIn(email, 'cache-user-password');
    await cachedOnB((instance) => me(instance, again));
    const changed = await call(a, 'PATCH', `/users/${id}/password`, again, {
      password: 'cache-user-password-2',
    });
    expect(changed.status).toBe(200);
    await refusedOnBoth((instance) => me(instance, again), 401);
  });

  it('a role change, a deactivation and two-factor changes on A end the token on B', async () => {
    const email = `roles-${suffix}@example.com`;
    const id = await createUser(email, 'admin');
    const users = (headers: Record<string, string>) => (instance: ApiProcess) =>
      call(instance, 'GET', '/users', headers);

    const demoted = await signIn(email, 'cache-user-password');
    await cachedOnB(users(demoted));
    expect((await call(a, 'PATCH', `/users/${id}`, admin, { role: 'viewer' })).status).toBe(200);
    await refusedOnBoth(users(demoted), 401);

    const enrolling = await signIn(email, 'cache-user-password');
    await cachedOnB((instance) => me(instance, enrolling));
    const setup = await call(a, 'POST', '/auth/2fa/setup', enrolling, {});
    expect(setup.status).toBe(200);
    const secret = setup.body.data.secret as string;
    const enabled = await call(a, 'POST', '/auth/2fa/enable', enrolling, { code: await codeFor(secret) });
    expect(enabled.status).toBe(200);
    await refusedOnBoth((instance) => me(instance, enrolling), 401);

    // The code of the enabling step is spent: sign in with a recovery code instead.
    const [recovery] = enabled.body.recoveryCodes as string[];
    const enrolled = await signIn(email, 'cache-user-password', recovery);
    await cachedOnB((instance) => me(instance, enrolled));
    expect((await call(a, 'POST', `/users/${id}/2fa/reset`, admin, {})).status).toBe(200);
    await refusedOnBoth((instance) => me(instance, enrolled), 401);

    const deactivated = await signIn(email, 'cache-user-password');
    await cachedOnB((instance) => me(instance, deactivated));
    expect((await call(a, 'DELETE', `/users/${id}`, admin)).status).toBe(200);
    await refusedOnBoth((instance) => me(instance, deactivated), 401);
  });
});
