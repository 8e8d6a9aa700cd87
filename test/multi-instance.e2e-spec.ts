import { MongoClient } from 'mongodb';
import { callApi, startApi, type ApiAnswer, type ApiProcess } from './helpers/api-process';
import { startRedis, type TestRedis } from './helpers/redis';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import {
  compileWorker,
  killAll,
  startWorker,
  waitFor,
  type CompiledWorker,
  type WorkerEnv,
  type WorkerProcess,
  COMPILE_HOOK_MS,
} from './helpers/worker-process';

const ADMIN = { email: 'ops-admin@example.com', password: 'ops-admin-password' };
const ORIGIN = 'https://shop.example.com';
const RECIPIENTS = 200;
const CAMPAIGN_SUBJECT = 'Multi-instance news';

/**
 * The README's topology as real processes: two API instances (`node main.js`) behind no load balancer (the
 * test picks the instance), one worker process (`node worker.js`), one database (this test file's, on the
 * dev database server of the run), one `redis-server` and one SMTP server. What must hold across instances:
 * the per-client rate limit, revocation and key rotation at once, and a campaign delivered exactly once while
 * several workers (both instances' and the worker process's) claim from one queue. Each process signs its
 * mail with its own MAIL_FROM, so the test can see which ones delivered.
 */
describe('Several instances: two API processes and a worker process on one database and one Redis', () => {
  let compiled: CompiledWorker;
  let redis: TestRedis;
  let smtp: TestSmtpServer;
  let mongo: MongoClient;
  let a: ApiProcess;
  let b: ApiProcess;
  const processes: WorkerProcess[] = [];
  let admin: Record<string, string>;
  let appId: string;
  let publicKey: string;

  beforeAll(async () => {
    [compiled, redis, smtp] = await Promise.all([compileWorker(), startRedis(), startSmtpServer()]);
    mongo = await new MongoClient(process.env.MONGODB_URI!).connect();
    const shared: WorkerEnv = {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: smtp.url,
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      BCRYPT_COST: '4',
      CHAT_WORKER_ENABLED: 'false',
      EMAIL_WORKER_INTERVAL_MS: '100',
    };
    // The instances sit behind a (simulated) load balancer: the client is named by X-Forwarded-For.
    // Both instances get the same configuration, the start-up admin included (created once between them).
    const api: WorkerEnv = {
      ...shared,
      REDIS_URL: redis.url,
      TRUST_PROXY: 'true',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
    };
    const started = await Promise.all([
      startApi(compiled, 'api-a', { ...api, MAIL_FROM: 'Instance A <a@mail.example.com>' }),
      startApi(compiled, 'api-b', { ...api, MAIL_FROM: 'Instance B <b@mail.example.com>' }),
    ]);
    [a, b] = started;
    processes.push(
      a,
      b,
      startWorker(compiled, 'worker', { ...shared, MAIL_FROM: 'Worker <w@mail.example.com>' }),
    );

    const login = await callApi(a.baseUrl, 'POST', '/auth/login', { body: ADMIN });
    expect(login.status).toBe(200);
    admin = { authorization: `Bearer ${login.body.token}` };
    const app = await callApi(b.baseUrl, 'POST', '/admin/apps', {
      headers: admin,
      body: { id: 'multi-shop', name: 'Multi shop', allowedOrigins: [ORIGIN] },
    });
    expect(app.status).toBe(201);
    appId = app.body.data.id;
    publicKey = app.body.data.publicKey;
  }, COMPILE_HOOK_MS);

  afterAll(async () => {
    await killAll(processes);
    await mongo?.close();
    await smtp?.close();
    await redis?.close();
  });

  /** A failed expectation's context: what each process wrote. */
  const outputs = () =>
    processes
      .map((p) => `--- ${p.name} exit ${JSON.stringify(p.exit())}\n${p.output().slice(-3_000)}`)
      .join('\n');

  const joinlist = (instance: ApiProcess, client: string, email: string, key = publicKey) =>
    callApi(instance.baseUrl, 'POST', '/joinlist', {
      headers: { 'x-app-key': key, origin: ORIGIN, 'x-forwarded-for': client },
      body: { email },
    });

  it('the joinlist limit of 10 per minute per client holds across both instances', async () => {
    const client = '203.0.113.7';
    const answers: { instance: string; status: number }[] = [];
    // One client, its requests spread over the instances in turn, as a round-robin balancer would.
    for (let i = 0; i < 12; i++) {
      const instance = i % 2 === 0 ? a : b;
      const res = await joinlist(instance, client, `signup-${i}@example.com`);
      answers.push({ instance: instance === a ? 'A' : 'B', status: res.status });
    }
    expect(answers.map((answer) => answer.status)).toEqual([...Array<number>(10).fill(200), 429, 429]);
    // Each instance saw 6 requests and refused one: alone, each would have let all 6 through.
    expect(answers.slice(10)).toEqual([
      { instance: 'A', status: 429 },
      { instance: 'B', status: 429 },
    ]);
    // Another client behind the same balancer is not affected.
    expect((await joinlist(b, '198.51.100.20', 'other-client@example.com')).status).toBe(200);
    // The counters are Redis's, not the processes' memory.
    expect(await redis.client().keys(`*client:${client}*`)).not.toEqual([]);
  });

  it('a revoked API key and a rotated publishable key fail on both instances at once', async () => {
    const created = await callApi(a.baseUrl, 'POST', '/api-keys', {
      headers: admin,
      body: { appId, name: 'Shop backend' },
    });
    expect(created.status).toBe(201);
    const apiKey: string = created.body.data.key;
    let n = 0;
    const subscribe = (instance: ApiProcess) =>
      callApi(instance.baseUrl, 'POST', `/${appId}/newsletter/subscribe`, {
        headers: { 'x-api-key': apiKey },
        body: { email: `api-${(n += 1)}@example.com` },
      });
    const statuses = async (call: (instance: ApiProcess) => Promise<ApiAnswer>) => [
      (await call(a)).status,
      (await call(b)).status,
    ];

    expect(await statuses(subscribe)).toEqual([201, 201]);
    const revoked = await callApi(b.baseUrl, 'POST', `/api-keys/${created.body.data._id}/revoke`, {
      headers: admin,
    });
    expect(revoked.status).toBe(200);
    // Each instance refuses it within a second (docs/architecture.md "Credentials and roles"): asked until
    // it does.
    await waitFor(async () => (await statuses(subscribe)).every((status) => status === 403), {
      timeoutMs: 30_000,
      describe: () => 'an instance still accepts the revoked key',
    });

    // Each joinlist call from a client of its own, so the joinlist limit plays no part here.
    let client = 0;
    const join = (key: string) => (instance: ApiProcess) =>
      joinlist(instance, `192.0.2.${(client += 1)}`, `page-${client}@example.com`, key);
    expect(await statuses(join(publicKey))).toEqual([200, 200]);
    const rotated = await callApi(a.baseUrl, 'POST', `/admin/apps/${appId}/rotate-key`, { headers: admin });
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.data.publicKey;
    expect(newKey).not.toBe(publicKey);
    await waitFor(async () => (await statuses(join(publicKey))).every((status) => status === 403), {
      timeoutMs: 30_000,
      describe: () => 'an instance still accepts the rotated key',
    });
    expect(await statuses(join(newKey))).toEqual([200, 200]);
    publicKey = newKey;
  });

  it('a campaign sent while three workers claim from one queue reaches every recipient exactly once', async () => {
    // Keeps messages in flight for a moment, so the workers overlap instead of one draining the queue.
    smtp.delayMs = 10;
    const imported = await callApi(a.baseUrl, 'POST', `/admin/${appId}/newsletter/subscribers/import`, {
      headers: admin,
      body: {
        subscribers: Array.from({ length: RECIPIENTS }, (_, i) => ({ email: `reader-${i}@example.com` })),
      },
    });
    expect(imported.status).toBe(200);
    // The audience: the imported readers plus the earlier tests' signups (every active subscription).
    const audience = await mongo
      .db()
      .collection('contacts')
      .find({ subscriptions: { $elemMatch: { appId, status: 'active' } } }, { projection: { email: 1 } })
      .toArray();
    expect(audience.length).toBeGreaterThanOrEqual(RECIPIENTS + 10);

    const campaign = await callApi(a.baseUrl, 'POST', `/admin/${appId}/newsletter/campaigns`, {
      headers: admin,
      body: { name: 'Multi', subject: CAMPAIGN_SUBJECT, htmlContent: '<p>Hello {{firstName}}</p>' },
    });
    expect(campaign.status).toBe(201);
    const sent = await callApi(
      b.baseUrl,
      'POST',
      `/admin/${appId}/newsletter/campaigns/${campaign.body.data._id}/send`,
      {
        headers: admin,
      },
    );
    expect(sent.status).toBe(200);

    const jobs = mongo.db().collection('email_jobs');
    const campaignMail = () => smtp.received.filter((mail) => mail.headers.subject === CAMPAIGN_SUBJECT);
    await waitFor(
      async () =>
        campaignMail().length >= audience.length &&
        (await jobs.countDocuments({ status: { $in: ['pending', 'processing', 'failed'] } })) === 0,
      {
        timeoutMs: 45_000,
        describe: async () =>
          `campaign mail ${campaignMail().length}/${audience.length}, ` +
          `jobs ${JSON.stringify(await jobs.aggregate([{ $group: { _id: '$status', n: { $sum: 1 } } }]).toArray())}\n${outputs()}`,
      },
    );

    const perRecipient = new Map<string, number>();
    for (const mail of campaignMail()) {
      for (const to of mail.to) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
    }
    expect([...perRecipient.keys()].sort()).toEqual(audience.map((person) => person.email as string).sort());
    expect([...perRecipient.entries()].filter(([, times]) => times !== 1)).toEqual([]);
    expect(smtp.serverErrors).toEqual([]);
    // Several workers took part (the queue was shared, not drained by one of them).
    const senders = new Set(campaignMail().map((mail) => mail.headers.from));
    expect(senders.size).toBeGreaterThanOrEqual(2);
  });
});
