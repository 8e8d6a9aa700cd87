import { callApi, startApi, type ApiProcess } from './helpers/api-process';
import { waitFor } from './helpers/wait';
import {
  compileWorker,
  killAll,
  type CompiledWorker,
  type WorkerEnv,
  COMPILE_HOOK_MS,
} from './helpers/worker-process';

const ADMIN = { email: 'sessions-admin@example.com', password: 'sessions-admin-password' };

/**
 * Ending sessions across instances: two API processes on one database (no Redis: nothing of this is held
 * in a process but the credential cache, whose stamps are read at most a second apart). A token signed out,
 * revoked by an admin or ended by a password change on one instance is refused by the other shortly after:
 * the test asks until it is (docs/architecture.md "Credentials and roles").
 */
describe('Staff sessions end on every instance', () => {
  let compiled: CompiledWorker;
  let a: ApiProcess;
  let b: ApiProcess;

  beforeAll(async () => {
    compiled = await compileWorker();
    const env: WorkerEnv = {
      MONGODB_URI: process.env.MONGODB_URI!,
      // Nothing is sent: the e-mail worker is off in both instances.
      SMTP_URL: 'smtp://127.0.0.1:9',
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      BCRYPT_COST: '4',
      CHAT_WORKER_ENABLED: 'false',
      EMAIL_WORKER_ENABLED: 'false',
      TRUST_PROXY: 'true',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
    };
    [a, b] = await Promise.all([startApi(compiled, 'api-a', env), startApi(compiled, 'api-b', env)]);
  }, COMPILE_HOOK_MS);
  afterAll(() => killAll([a, b].filter(Boolean)));

  /** Signs in on instance A as a new client address (each test its own login budget). */
  async function signIn(email: string, password: string, n: number): Promise<Record<string, string>> {
    const login = await callApi(a.baseUrl, 'POST', '/auth/login', {
      body: { email, password },
      headers: { 'x-forwarded-for': `10.9.0.${n}` },
    });
    expect(login.status).toBe(200);
    return { authorization: `Bearer ${login.body.token}` };
  }
  const me = (instance: ApiProcess, headers: Record<string, string>) =>
    callApi(instance.baseUrl, 'GET', '/auth/me', { headers });

  /** Asks until the instance refuses the token. */
  const refused = (instance: ApiProcess, headers: Record<string, string>) =>
    waitFor(async () => (await me(instance, headers)).status === 401, {
      describe: () => `${instance.name} still accepts the token`,
    });

  it('signs out one token: refused on the other instance, while another session goes on', async () => {
    const first = await signIn(ADMIN.email, ADMIN.password, 1);
    const second = await signIn(ADMIN.email, ADMIN.password, 2);
    expect((await me(b, first)).status).toBe(200);
    expect((await callApi(a.baseUrl, 'POST', '/auth/logout', { headers: first })).status).toBe(200);
    await refused(b, first);
    expect((await me(b, second)).status).toBe(200);
  });

  it('ends every token of a user on an admin’s revoke and on a password change', async () => {
    const admin = await signIn(ADMIN.email, ADMIN.password, 3);
    const created = await callApi(b.baseUrl, 'POST', '/users', {
      headers: admin,
      body: {
        email: 'sessions-ada@example.com',
        password: 'ada-password-1',
        firstName: 'Ada',
        lastName: 'L',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    const ada = await signIn('sessions-ada@example.com', 'ada-password-1', 4);
    const adaElsewhere = await signIn('sessions-ada@example.com', 'ada-password-1', 5);
    expect((await me(b, ada)).status).toBe(200);

    const revoked = await callApi(b.baseUrl, 'POST', `/users/${id}/sessions/revoke`, { headers: admin });
    expect(revoked.status).toBe(200);
    await refused(a, ada);
    await refused(b, adaElsewhere);

    const again = await signIn('sessions-ada@example.com', 'ada-password-1', 6);
    const changed = await callApi(b.baseUrl, 'PATCH', `/users/${id}/password`, {
      headers: again,
      body: { password: 'ada-password-2' },
    });
    expect(changed.status).toBe(200);
    await refused(a, again);
    // The admin's own session was untouched throughout; the audit log has the revoke.
    const log = await callApi(
      a.baseUrl,
      'GET',
      `/admin/audit-log?targetId=${id}&action=user.revokeSessions`,
      {
        headers: admin,
      },
    );
    expect(log.status).toBe(200);
    expect(log.body.data).toHaveLength(1);
  });
});
