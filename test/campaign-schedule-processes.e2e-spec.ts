import { MongoClient } from 'mongodb';
import { subscriberDocument } from './helpers/factories';
import { callApi, startApi, type ApiProcess } from './helpers/api-process';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import {
  compileWorker,
  killAll,
  waitFor,
  type CompiledWorker,
  type WorkerEnv,
  COMPILE_HOOK_MS,
} from './helpers/worker-process';

const ADMIN = { email: 'schedule-admin@example.com', password: 'schedule-admin-password' };
const PEOPLE = ['ann@example.com', 'ben@example.com', 'cat@example.com'];
/** Far enough ahead for the request to land first; the waits below have generous deadlines instead. */
const LEAD_MS = 2_000;
const DEADLINE_MS = 90_000;

/**
 * Scheduled campaigns across real processes (docs/api/newsletters.md "Scheduled sends"): two API instances
 * with their e-mail workers on one database start a scheduled campaign exactly once, and a schedule made
 * before every instance stopped is started by an instance that comes up after its time.
 */
describe('Scheduled campaigns across instances and restarts', () => {
  let compiled: CompiledWorker;
  let smtp: TestSmtpServer;
  let mongo: MongoClient;
  let env: WorkerEnv;
  const processes: ApiProcess[] = [];
  let auth: Record<string, string>;
  const appId = 'schedule-shop';

  beforeAll(async () => {
    [compiled, smtp] = await Promise.all([compileWorker(), startSmtpServer()]);
    mongo = await new MongoClient(process.env.MONGODB_URI!).connect();
    env = {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: smtp.url,
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      BCRYPT_COST: '4',
      CHAT_WORKER_ENABLED: 'false',
      EMAIL_WORKER_ENABLED: 'true',
      EMAIL_WORKER_INTERVAL_MS: '200',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      MAIL_FROM: 'News <news@mail.example.com>',
      // The scheduler logs each start at `info`: the test counts them.
      LOG_LEVEL: 'info',
    };
    // tsc of the whole service on a loaded 2-core machine: minutes at worst.
  }, COMPILE_HOOK_MS);

  afterAll(async () => {
    await killAll(processes);
    await mongo?.close();
    await smtp?.close();
  });

  const start = async (name: string): Promise<ApiProcess> => {
    const api = await startApi(compiled, name, env);
    processes.push(api);
    return api;
  };
  const outputs = () => processes.map((p) => `--- ${p.name}\n${p.output().slice(-2_000)}`).join('\n');
  const mailsWith = (subject: string) => smtp.received.filter((mail) => mail.headers.subject === subject);
  const campaign = (api: ApiProcess, id: string) =>
    callApi(api.baseUrl, 'GET', `/admin/${appId}/newsletter/campaigns/${id}`, { headers: auth });

  async function schedule(api: ApiProcess, subject: string): Promise<{ id: string; sendAt: Date }> {
    const created = await callApi(api.baseUrl, 'POST', `/admin/${appId}/newsletter/campaigns`, {
      headers: auth,
      body: { name: subject, subject, htmlContent: '<p>Hello {{firstName}}</p>' },
    });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    const sendAt = new Date(Date.now() + LEAD_MS);
    const scheduled = await callApi(
      api.baseUrl,
      'POST',
      `/admin/${appId}/newsletter/campaigns/${id}/schedule`,
      {
        headers: auth,
        body: { sendAt: sendAt.toISOString() },
      },
    );
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.data).toMatchObject({ status: 'scheduled', scheduledFor: sendAt.toISOString() });
    return { id, sendAt };
  }

  async function expectSentOnce(api: ApiProcess, id: string, subject: string): Promise<void> {
    await waitFor(
      async () =>
        mailsWith(subject).length >= PEOPLE.length && (await campaign(api, id)).body.data?.status === 'sent',
      { timeoutMs: DEADLINE_MS, describe: () => `${mailsWith(subject).length} mails\n${outputs()}` },
    );
    expect(
      mailsWith(subject)
        .flatMap((mail) => mail.to)
        .sort(),
    ).toEqual(PEOPLE);
    // One start: one plan job (a second claim would have queued none, but would have logged a start).
    const plans = await mongo
      .db()
      .collection('email_jobs')
      .countDocuments({ type: 'email.batch.plan', campaignId: id });
    expect(plans).toBe(1);
    const starts = processes
      .map((p) => p.output())
      .join('')
      .split(`Scheduled campaign ${id} started`);
    expect(starts).toHaveLength(2);
    expect((await campaign(api, id)).body.data.stats).toMatchObject({
      total: PEOPLE.length,
      sent: PEOPLE.length,
    });
  }

  it('fires once across two instances on one database', async () => {
    const [a, b] = await Promise.all([start('api-a'), start('api-b')]);
    const login = await callApi(a.baseUrl, 'POST', '/auth/login', { body: ADMIN });
    expect(login.status).toBe(200);
    auth = { authorization: `Bearer ${login.body.token}` };
    expect(
      (await callApi(b.baseUrl, 'POST', '/admin/apps', { headers: auth, body: { id: appId, name: 'Shop' } }))
        .status,
    ).toBe(201);
    await mongo
      .db()
      .collection('contacts')
      .insertMany(PEOPLE.map((email) => subscriberDocument(appId, email, email.split('@')[0])));

    const { id } = await schedule(b, 'Scheduled once');
    await expectSentOnce(a, id, 'Scheduled once');
  }, 180_000);

  it('survives a restart: a schedule made before all instances stopped starts when one is back', async () => {
    const [a] = processes;
    const { id, sendAt } = await schedule(a, 'After the restart');
    await killAll(processes);
    const stored = await mongo.db().collection('campaigns').findOne({ subject: 'After the restart' });
    expect(stored?.status).toBe('scheduled');
    // Nothing runs while its time passes: the instance that starts afterwards finds it due.
    await waitFor(() => Date.now() > sendAt.getTime(), { timeoutMs: DEADLINE_MS, describe: () => 'clock' });
    const c = await start('api-c');
    await expectSentOnce(c, id, 'After the restart');
  }, 180_000);
});
