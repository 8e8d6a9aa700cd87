import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestApp, type TestApp } from './helpers/app';
import { createSession, type Session } from './helpers/session';
import { compileWorker, COMPILE_HOOK_MS } from './helpers/worker-process';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm run seed:demo` (the compiled src/cli/seed-demo.ts as a real process) against this file's database: the
 * demo shows in the statistics and analytics routes, a second run adds nothing, production is refused.
 */
describe('npm run seed:demo', () => {
  let t: TestApp;
  let admin: Session;
  let seedJs: string;
  let dataDir: string;

  beforeAll(async () => {
    const compiled = await compileWorker();
    seedJs = [
      join(compiled.dir, 'cli', 'seed-demo.js'),
      join(compiled.dir, 'src', 'cli', 'seed-demo.js'),
    ].find(existsSync)!;
    t = await createTestApp();
    admin = await createSession(t);
    dataDir = mkdtempSync(join(tmpdir(), 'seed-demo-'));
  }, COMPILE_HOOK_MS);
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const seed = (env: Record<string, string> = {}) =>
    new Promise<Run>((done) => {
      const child = spawn(process.execPath, [seedJs], {
        env: {
          PATH: process.env.PATH ?? '',
          NODE_PATH: resolve(__dirname, '..', 'node_modules'),
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          MONGODB_URI: process.env.MONGODB_URI!,
          APP_SECRET: process.env.APP_SECRET!,
          BCRYPT_COST: '4',
          DATA_DIR: dataDir,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stdout, stderr }));
    });

  /** Documents per collection: what a repeated run must leave unchanged. */
  const counts = async () => {
    const result: Record<string, number> = {};
    for (const collection of await t.connection.db!.collections()) {
      result[collection.collectionName] = await collection.countDocuments();
    }
    return result;
  };

  it('refuses with NODE_ENV=production in one line, before touching the database', async () => {
    const before = await counts();
    const run = await seed({ NODE_ENV: 'production' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining('NODE_ENV=production')]);
    expect(await counts()).toEqual(before);
  });

  it('fills the statistics and analytics, and a second run adds nothing', async () => {
    const first = await seed();
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain(`Sign in as ${admin.user.email}`);
    expect(first.stdout).toMatch(/App demo-shop: publishable key pk_[0-9a-f]+/);
    expect(first.stdout).toMatch(/API key [0-9a-f]{24}: sk_demo-blog_[0-9a-f]{64}/);
    const afterFirst = await counts();

    const second = await seed();
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toContain('The demo was complete already: nothing added.');
    expect(second.stdout).toContain('0 engagement event(s) added');
    // The same keys are found and shown again, not new ones made.
    const keys = (run: Run) => run.stdout.match(/sk_[\w-]+/g);
    expect(keys(second)).toEqual(keys(first));
    expect(await counts()).toEqual(afterFirst);

    const campaigns = await admin.http.get('/admin/demo-shop/newsletter/campaigns');
    expect(campaigns.body.data).toHaveLength(1);
    const [campaign] = campaigns.body.data;
    expect(campaign.status).toBe('sent');

    const analytics = await admin.http.get(`/admin/email-events/analytics/campaigns/${campaign._id}`);
    expect(analytics.status).toBe(200);
    const stats = analytics.body.data;
    expect(stats.sent).toBe(campaign.stats.sent);
    for (const counter of ['delivered', 'opened', 'uniqueOpens', 'clicked', 'automatedOpens']) {
      expect(stats[counter]).toBeGreaterThan(0);
    }
    expect(stats.topLinks[0].url).toBe('https://shop.example.com/new');

    const overview = await admin.http.get('/admin/email-events/analytics/overview');
    expect(overview.status).toBe(200);
    expect(overview.body.data.totalOpened).toBe(stats.opened);
    expect(overview.body.data.totalClicked).toBe(stats.clicked);

    const tickets = await admin.http.get('/demo-shop/tickets/stats');
    expect(tickets.status).toBe(200);
    expect(tickets.body.data.total).toBe(90);
    // Spread over the month, not all on the day of the run.
    const busyDays = tickets.body.data.volumeOverTime.filter((day: { count: number }) => day.count > 0);
    expect(busyDays.length).toBeGreaterThan(10);
    expect(tickets.body.data.byStatus.resolved).toBeGreaterThan(0);
    expect(tickets.body.data.averageResolutionTime).toBeGreaterThan(0);

    const subscribers = await admin.http.get('/admin/demo-shop/newsletter/subscribers/stats');
    expect(subscribers.body.data).toMatchObject({ total: 240 });
    expect(subscribers.body.data.active).toBeGreaterThan(200);

    const wants = await admin.http.get('/admin/demo-blog/wants/stats');
    expect(wants.body.data.total).toBe(7);
    const list = await admin.http.get('/admin/demo-blog/wants?sort=votes');
    expect(list.body.data[0]).toMatchObject({ title: 'Dark mode', voteCount: 23 });

    const feedback = await admin.http.get('/admin/demo-shop/feedback/stats');
    expect(feedback.body.data.total).toBe(10);
  }, 300_000);
});
