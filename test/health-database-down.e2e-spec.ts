import { DevDatabase, startDevDatabase, withDatabaseName } from '../src/database/dev-database';
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

  it('answers 200 while connected, then 503 with status "error" once the database stops', async () => {
    expect((await t.http.get('/health')).status).toBe(200);
    await database.stop();
    const res = await t.http.get('/health');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('error');
    expect(res.body.database.connected).toBe(false);
  });
});
