import { DevDatabase, startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { createTestApp, TestApp } from './helpers/app';
import { waitFor } from './helpers/wait';

describe('GET /health when the database goes away', () => {
  let database: DevDatabase;
  let t: TestApp;

  beforeAll(async () => {
    // A database of this file's own, so stopping it does not disturb the other test files.
    database = await startDevDatabase();
    process.env.MONGODB_URI = withDatabaseName(database.uri, 'health_down');
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    await database.stop();
  });

  it('answers 200 while connected, then 503 with status "error" once the database stops', async () => {
    expect((await t.http.get('/health')).status).toBe(200);
    expect((await t.http.get('/health/live')).status).toBe(200);
    await database.stop();
    // The driver's monitor marks the connection down (or the next background refresh finds it gone); the
    // deadline is a safety net, not the claim.
    let res = await t.http.get('/health');
    await waitFor(async () => (res = await t.http.get('/health')).status !== 200, {
      intervalMs: 100,
      describe: () => `still ${res.status}`,
    });
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('error');
    expect(res.body.database.connected).toBe(false);
    // Nothing else is asked of a database that did not answer the ping; the probe stays bounded.
    expect(res.body.emailWorker).toEqual({ enabled: false, lastRun: null, queue: null });
    expect(res.body.chatBacklog).toBeNull();

    // Liveness does not depend on the database: the process is fine, only its readiness is not.
    const live = await t.http.get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ success: true, data: { status: 'ok', uptime: expect.any(Number) } });
  });
});
