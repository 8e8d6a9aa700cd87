import type { CommandStartedEvent } from 'mongodb';
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

  it('answers 50 calls without a count or ping of their own (at most one background refresh)', async () => {
    commands.length = 0;
    for (let i = 0; i < 50; i += 1) {
      const res = await t.http.get('/health');
      expect(res.status).toBe(200);
      expect(res.body.database.connected).toBe(true);
    }
    const counts = commands.filter((name) => COUNTING.has(name));
    const pings = commands.filter((name) => name === 'ping');
    expect(counts.length).toBeLessThanOrEqual(ONE_REFRESH);
    expect(pings.length).toBeLessThanOrEqual(1);
  });

  it('says when its database figures were last refreshed (at most 10 s ago, plus the 2 s bound)', async () => {
    const res = await t.http.get('/health');
    const age = Date.now() - new Date(res.body.checkedAt as string).getTime();
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(12_000);
  });
});
