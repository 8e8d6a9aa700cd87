import type { CommandStartedEvent } from 'mongodb';
import { HEALTH_REFRESH_MS, HealthService } from '../src/health/health.service';
import { createTestApp, TestApp } from './helpers/app';

/** The commands that read the queue and the outbox: countDocuments is an aggregate, the old count a count. */
const COUNTING = new Set(['aggregate', 'count']);
/** One background refresh: five e-mail job statuses and two chat backlog statuses. */
const ONE_REFRESH = 7;

describe('GET /health costs the database nothing per request', () => {
  let t: TestApp;
  const commands: string[] = [];

  beforeAll(async () => {
    // Command monitoring on this file's connection: every command the driver sends is seen here.
    process.env.MONGODB_URI = `${process.env.MONGODB_URI}?monitorCommands=true`;
    t = await createTestApp();
    t.connection
      .getClient()
      .on('commandStarted', (event: CommandStartedEvent) => commands.push(event.commandName));
  });
  afterAll(() => t.close());

  it('answers 50 calls without a count or ping of their own (only background refreshes count)', async () => {
    commands.length = 0;
    const started = Date.now();
    for (let i = 0; i < 50; i += 1) {
      const res = await t.http.get('/health');
      expect(res.status).toBe(200);
      expect(res.body.database.connected).toBe(true);
    }
    // The first call starts the refreshes, then one per HEALTH_REFRESH_MS: a slow machine, taking longer
    // over the 50 calls, is allowed the refreshes that fell due meanwhile, and no more.
    const refreshes = 1 + Math.floor((Date.now() - started) / HEALTH_REFRESH_MS);
    const counts = commands.filter((name) => COUNTING.has(name));
    const pings = commands.filter((name) => name === 'ping');
    expect(pings.length).toBeLessThanOrEqual(refreshes);
    expect(counts.length).toBeLessThanOrEqual(ONE_REFRESH * refreshes);
  });

  it('says when its database figures were last refreshed', async () => {
    // A refresh made here: the record's time is that refresh's (or a background one's after it).
    const before = Date.now();
    await t.app.get(HealthService).refresh();
    const checkedAt = new Date((await t.http.get('/health')).body.checkedAt as string).getTime();
    const after = Date.now();
    expect(checkedAt).toBeGreaterThanOrEqual(before);
    expect(checkedAt).toBeLessThanOrEqual(after);
  });
});
