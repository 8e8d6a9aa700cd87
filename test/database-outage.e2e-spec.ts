import { Logger } from '@nestjs/common';
import { DatabaseAvailability } from '../src/database/database-availability';
import { type DevDatabase, startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { createTestApp, type TestApp } from './helpers/app';
import type { TestResponse } from './helpers/http';
import { createSession, type Session, TEST_PASSWORD } from './helpers/session';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy';

/** A client's own patience: far above what failing fast takes, far below what a hanging request takes. */
const CLIENT_TIMEOUT_MS = 8_000;

function withinClientTimeout(request: Promise<TestResponse>): Promise<TestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`no answer within ${CLIENT_TIMEOUT_MS} ms`)), CLIENT_TIMEOUT_MS);
  });
  return Promise.race([request, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The database goes away (its connection cut at a proxy: open connections reset, new ones refused) and
 * comes back (docs/operations/running-on-mongodb.md, "When the database is away"): requests that need it
 * answer 503 with `Retry-After` instead of hanging, `/health` follows the driver's checks both ways, and
 * the workers pause claiming with one line when it goes and one when it returns.
 */
describe('A database outage', () => {
  let database: DevDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let admin: Session;
  let availability: DatabaseAvailability;
  const saved = { ...process.env };
  const warn = jest.spyOn(Logger.prototype, 'warn');
  const log = jest.spyOn(Logger.prototype, 'log');

  beforeAll(async () => {
    database = await startDevDatabase();
    const { hostname, port } = new URL(database.uri);
    proxy = await startTcpProxy({ host: hostname, port: Number(port) });
    process.env.MONGODB_URI = withDatabaseName(`mongodb://127.0.0.1:${proxy.port}`, 'outage');
    // Both workers run in this process, as in `npm start`.
    process.env.EMAIL_WORKER_ENABLED = 'true';
    process.env.CHAT_WORKER_ENABLED = 'true';
    t = await createTestApp();
    admin = await createSession(t);
    availability = t.app.get(DatabaseAvailability);
  }, 120_000);
  afterAll(async () => {
    warn.mockRestore();
    log.mockRestore();
    process.env = saved;
    await t?.close();
    await proxy?.close();
    await database?.stop();
  });

  /** Resolves on the next change of reachability to `reachable`. */
  const next = (reachable: boolean) =>
    new Promise<void>((done) => {
      const stop = availability.onChange((change) => {
        if (change.reachable !== reachable) return;
        stop();
        done();
      });
    });

  /** The lines a worker logged through `spy`, by the logger's context (its class name). */
  const linesOf = (spy: jest.SpyInstance, worker: string, pattern: RegExp) =>
    spy.mock.calls.filter(
      (call, i) =>
        (spy.mock.contexts[i] as { context?: string }).context === worker && pattern.test(String(call[0])),
    );

  it('answers 503 with Retry-After at once while it is away, and reports it down and back up', async () => {
    expect((await admin.http.get('/apps')).status).toBe(200);
    const health = await t.http.get('/health');
    expect(health.status).toBe(200);
    expect(health.body.database.connected).toBe(true);

    const lost = next(false);
    await proxy.cut();
    await lost;
    const down = await t.http.get('/health');
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'error', database: { connected: false } });

    // A read behind a bearer token, a sign-in (a public route reading a user) and a write.
    const requests = [
      admin.http.get('/apps'),
      t.http.post('/auth/login', { email: admin.user.email, password: TEST_PASSWORD }),
      admin.http.post('/admin/apps', { id: 'during-outage', name: 'During the outage' }),
    ];
    for (const res of await Promise.all(requests.map(withinClientTimeout))) {
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toEqual({ success: false, error: 'The database is unavailable; try again shortly' });
    }

    const back = next(true);
    await proxy.restore();
    await back;
    const up = await t.http.get('/health');
    expect(up.status).toBe(200);
    expect(up.body.database.connected).toBe(true);
    expect((await admin.http.get('/apps')).status).toBe(200);
  });

  it('pauses both workers with one line when it goes and one when it returns', () => {
    // The engine logs under each kind's name (src/email/jobs/email-kind.ts, src/chat/chat-kind.ts).
    for (const worker of ['email worker', 'chat worker']) {
      expect(linesOf(warn, worker, /database is unreachable: claiming paused/)).toHaveLength(1);
      expect(linesOf(log, worker, /database is back after [\d.]+ s: claiming resumed/)).toHaveLength(1);
      // Nothing else failed loudly meanwhile: no failed run, no failed reaping.
      expect(linesOf(warn, worker, /failed/i)).toHaveLength(0);
    }
  });
});
