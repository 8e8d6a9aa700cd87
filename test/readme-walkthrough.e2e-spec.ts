import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callApi, startApi, type ApiProcess } from './helpers/api-process';
import { type BashRun, markedBashBlock, runBash } from './helpers/doc-blocks';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { compileWorker, killAll, type WorkerProcess, COMPILE_HOOK_MS } from './helpers/worker-process';

/** The first admin the README's "First login" starts the service with. */
const ADMIN = { email: 'admin@example.com', password: 'change-me-now' };
/** The secret docs/api/providers.md tells the reader to start the service with. */
const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** Printed between the two blocks: the walkthrough ran to its end, and left these variables. */
const REPORT = '\nprintf "\\nWALKTHROUGH DONE %s %s\\n" "$APP_ID" "$CAMPAIGN_ID"\n';
function reported(run: BashRun): { appId: string; campaignId: string } {
  const line = /^WALKTHROUGH DONE (\S+) (\S+)$/m.exec(run.stdout);
  if (!line) throw new Error(`the walkthrough did not run to its end:\n${run.stdout}\n${run.stderr}`);
  return { appId: line[1], campaignId: line[2] };
}

/**
 * The README's five-minute walkthrough pasted into bash, then the signed provider webhook of
 * docs/api/providers.md, which continues in the same shell. Against the service as `npm start` runs it (a
 * real `node main.js` process with its worker, the first admin from ADMIN_EMAIL/ADMIN_PASSWORD,
 * WEBHOOK_SECRET as that page says) and a real SMTP server.
 */
describe('README walkthrough, pasted into bash', () => {
  let smtp: TestSmtpServer;
  let api: ApiProcess;
  const processes: WorkerProcess[] = [];
  let run: BashRun;

  beforeAll(async () => {
    const compiled = await compileWorker();
    smtp = await startSmtpServer();
    api = await startApi(compiled, 'api', {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: smtp.url,
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      BCRYPT_COST: '4',
      CHAT_WORKER_ENABLED: 'false',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      WEBHOOK_SECRET,
    });
    processes.push(api);
    const script = [
      markedBashBlock('README.md', 'walkthrough'),
      REPORT,
      markedBashBlock('docs/api/providers.md', 'webhook-example'),
    ].join('\n');
    run = await runBash(script, { API: api.baseUrl }, mkdtempSync(join(tmpdir(), 'walkthrough-')));
  }, COMPILE_HOOK_MS);

  afterAll(async () => {
    await killAll(processes);
    await smtp?.close();
  });

  const context = () =>
    `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}\n--- api\n${api.output().slice(-3_000)}`;

  it('the walkthrough runs top to bottom without a failing step', () => {
    expect({ done: /^WALKTHROUGH DONE /m.test(run.stdout), context: context() }).toEqual({
      done: true,
      context: expect.any(String),
    });
  });

  it('sent the campaign to the three subscribers, and the analytics count it', async () => {
    const { appId, campaignId } = reported(run);
    const login = await callApi(api.baseUrl, 'POST', '/auth/login', { body: ADMIN });
    const admin = { authorization: `Bearer ${login.body.token}` };

    const campaign = await callApi(api.baseUrl, 'GET', `/admin/${appId}/newsletter/campaigns/${campaignId}`, {
      headers: admin,
    });
    expect(campaign.body.data).toMatchObject({ status: 'sent', stats: { total: 3, sent: 3, failed: 0 } });
    const analytics = await callApi(
      api.baseUrl,
      'GET',
      `/admin/email-events/analytics/campaigns/${campaignId}`,
      {
        headers: admin,
      },
    );
    expect(analytics.body.data).toMatchObject({ sent: 3 });
    expect(smtp.received.flatMap((mail) => mail.to).sort()).toEqual([
      'ada@example.com',
      'alan@example.com',
      'grace@example.com',
    ]);
    // The walkthrough showed the reader the same figure.
    expect(run.stdout).toContain('"sent":3');
  });

  it('the signed provider webhook example is accepted and counted as a delivery', async () => {
    expect({ code: run.code, context: context() }).toEqual({ code: 0, context: expect.any(String) });
    expect(run.stdout).toContain('"processed":true');
    const { campaignId } = reported(run);
    const login = await callApi(api.baseUrl, 'POST', '/auth/login', { body: ADMIN });
    const analytics = await callApi(
      api.baseUrl,
      'GET',
      `/admin/email-events/analytics/campaigns/${campaignId}`,
      {
        headers: { authorization: `Bearer ${login.body.token}` },
      },
    );
    expect(analytics.body.data).toMatchObject({ sent: 3, delivered: 1 });
  });
});
