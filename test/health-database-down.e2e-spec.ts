import { DevDatabase, startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { HEALTH_REFRESH_MS } from '../src/health/health.service';
import { createTestApp, TestApp } from './helpers/app';

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

  it('answers 200 while connected, then 503 with status "error" within a refresh once the database stops', async () => {
    expect((await t.http.get('/health')).status).toBe(200);
    expect((await t.http.get('/health/live')).status).toBe(200);
    await database.stop();
    const startedAt = Date.now();
    // The figures are refreshed in the background: the loss shows within one refresh (10 s) and its 2 s
    // bound, or sooner when the driver's own monitor marks the connection down.
    let res = await t.http.get('/health');
    while (res.status === 200 && Date.now() - startedAt < 15_000) {
      await new Promise((done) => setTimeout(done, 100));
      res = await t.http.get('/health');
    }
    expect(res.status).toBe(503);
    expect(Date.now() - startedAt).toBeLessThan(HEALTH_REFRESH_MS + 3_000);
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
