import { callApi, startApi, type ApiProcess } from './helpers/api-process';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { compileWorker, waitFor, COMPILE_HOOK_MS } from './helpers/worker-process';

const ADMIN = { email: 'log-admin@example.com', password: 'log-admin-password' };
const MARKER = 'template-log-marker-7f3a';

/**
 * Handlebars' `log` helper wrote whatever a template passed it to the server's stdout: recipients' addresses
 * and names from a campaign, and a CRLF in a name forged log lines. The built server, its stdout read.
 */
describe('Templates write nothing to the server log', () => {
  let smtp: TestSmtpServer;
  let api: ApiProcess;
  let admin: Record<string, string>;

  beforeAll(async () => {
    const [compiled, server] = await Promise.all([compileWorker(), startSmtpServer()]);
    smtp = server;
    api = await startApi(compiled, 'api', {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: smtp.url,
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: process.env.DATA_DIR!,
      BCRYPT_COST: '4',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    const login = await callApi(api.baseUrl, 'POST', '/auth/login', { body: ADMIN });
    expect(login.status).toBe(200);
    admin = { authorization: `Bearer ${login.body.token}` };
  }, COMPILE_HOOK_MS);
  afterAll(async () => {
    await api?.kill();
    await smtp?.close();
  });

  it('refuses {{log}} on save, and nothing a template says reaches stdout', async () => {
    const app = await callApi(api.baseUrl, 'POST', '/admin/apps', {
      headers: admin,
      body: { id: 'log-shop', name: 'Log shop' },
    });
    expect(app.status).toBe(201);
    const template = await callApi(api.baseUrl, 'POST', '/admin/templates', {
      headers: admin,
      body: { name: 'logged', subject: 'Hi', htmlTemplate: `{{log "${MARKER}"}}`, textTemplate: 'Hi' },
    });
    expect(template.status).toBe(400);
    expect(template.body.error).toMatch(/^htmlTemplate: .*log/);
    const campaign = await callApi(api.baseUrl, 'POST', '/admin/log-shop/newsletter/campaigns', {
      headers: admin,
      body: {
        name: 'c',
        subject: `{{log "${MARKER}\r\n{\\"level\\":30,\\"msg\\":\\"forged\\"}" email firstName}}`,
        htmlContent: '<p>Hi</p>',
      },
    });
    expect(campaign.status).toBe(400);
    expect(campaign.body.error).toMatch(/^subject: /);

    // The access-log line of a later request: everything written before it is in the output.
    expect((await callApi(api.baseUrl, 'GET', '/no-such-route-probe')).status).toBe(404);
    await waitFor(() => Promise.resolve(api.output().includes('/no-such-route-probe')), {
      timeoutMs: 30_000,
      describe: () => api.output(),
    });
    expect(api.output()).not.toContain(MARKER);
    expect(api.output()).not.toContain('forged');
  });
});
