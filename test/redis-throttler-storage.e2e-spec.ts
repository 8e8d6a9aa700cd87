import { Logger } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import { MagicLinkService } from '../src/auth/magic-link/magic-link.service';
import { RedisThrottlerStorage } from '../src/common/http/redis-throttler-storage';
import { createTestApp, type TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { startRedis, type TestRedis } from './helpers/redis';
import { settles, waitFor } from './helpers/wait';

const MINUTE_MS = 60_000;

/**
 * The throttler storage behind REDIS_URL against a real `redis-server`: counters shared between instances,
 * the fallback to per-process counting while Redis is down and the return to Redis, the application's
 * wiring (every ThrottlerStorage user counts in Redis) and the connection closed on shutdown.
 */
describe('Rate-limit counters in Redis', () => {
  let redis: TestRedis;
  let inspector: Redis;
  const storages: RedisThrottlerStorage[] = [];

  beforeAll(async () => {
    // The storages made outside an application log through Nest's default logger: quiet, as the apps are.
    Logger.overrideLogger(false);
    redis = await startRedis();
    inspector = redis.client();
    // The first run has Maven fetch the packaged redis-server (test/helpers/redis-binary.ts).
  }, 120_000);
  afterEach(async () => {
    await Promise.all(storages.splice(0).map((storage) => storage.onApplicationShutdown()));
    if (inspector?.status === 'ready') await inspector.flushall();
  });
  afterAll(async () => {
    await redis?.close();
  });

  async function storage(url = redis.url): Promise<RedisThrottlerStorage> {
    const created = new RedisThrottlerStorage(url);
    storages.push(created);
    await created.onModuleInit();
    return created;
  }
  const hit = (target: RedisThrottlerStorage, key = 'client:203.0.113.7') =>
    target.increment(key, MINUTE_MS, 3, MINUTE_MS, 'route');

  it('two instances count one client together: the fourth hit is blocked whichever instance takes it', async () => {
    const [a, b] = [await storage(), await storage()];
    const results = [await hit(a), await hit(b), await hit(a), await hit(b)];
    expect(results.map((r) => r.totalHits)).toEqual([1, 2, 3, 4]);
    expect(results.map((r) => r.isBlocked)).toEqual([false, false, false, true]);
    expect(results[3].timeToBlockExpire).toBeGreaterThan(55);
    // Another client has a budget of its own.
    expect(await hit(a, 'client:198.51.100.1')).toMatchObject({ totalHits: 1, isBlocked: false });
    expect(await inspector.keys('*client:203.0.113.7*')).toEqual(
      expect.arrayContaining([expect.stringContaining(':hits')]),
    );
  });

  it('Redis down: limits still hold per instance; Redis back: counting is shared again', async () => {
    const a = await storage();
    expect(await hit(a)).toMatchObject({ totalHits: 1 });

    await redis.stop();
    await waitFor(() => a['redis'].status !== 'ready', { timeoutMs: 10_000, describe: () => 'still ready' });
    // The process's own counters: not unlimited, and no request waits for the lost server (none asks it).
    const shared = jest.spyOn(a['shared'], 'increment');
    const local = [await hit(a), await hit(a), await hit(a), await hit(a)];
    expect(shared).not.toHaveBeenCalled();
    shared.mockRestore();
    expect(local.map((r) => r.isBlocked)).toEqual([false, false, false, true]);

    await redis.start();
    await waitFor(() => a['redis'].status === 'ready', {
      timeoutMs: 15_000,
      describe: () => `client status ${a['redis'].status}`,
    });
    const b = await storage();
    // The restarted server is empty: the two instances count from 1 together.
    expect([(await hit(a)).totalHits, (await hit(b)).totalHits]).toEqual([1, 2]);
  });

  it('Redis hung: one hit waits the command timeout, the next ones count locally at once', async () => {
    const a = await storage();
    const key = 'client:192.0.2.50';
    expect(await hit(a, key)).toMatchObject({ totalHits: 1 });
    redis.pause();
    try {
      const shared = jest.spyOn(a['shared'], 'increment');
      // The paused server never answers: the hit ending at all is the command timeout at work (the safety
      // deadline is far below a request's lifetime).
      let during: Awaited<ReturnType<typeof hit>> | undefined;
      expect(await settles(hit(a, key).then((record) => (during = record)))).toBe(true);
      expect(shared).toHaveBeenCalledTimes(1);
      // The local count starts afresh: the limit is enforced again from here, per instance.
      expect(during).toMatchObject({ totalHits: 1, isBlocked: false });
      // The next requests do not wait for the hung server: until Redis is tried again they count locally,
      // without asking it. The clock is held just before that retry, so a slow machine cannot pass it.
      const clock = jest.spyOn(Date, 'now').mockReturnValue(a['retryAt'] - 1);
      expect(await hit(a, key)).toMatchObject({ totalHits: 2, isBlocked: false });
      clock.mockRestore();
      expect(shared).toHaveBeenCalledTimes(1);
      shared.mockRestore();
    } finally {
      redis.resume();
    }
  });

  it('Redis unreachable at start-up: the process starts, counts locally, and moves to Redis once it answers', async () => {
    await redis.stop();
    const a = await storage();
    const results = [await hit(a), await hit(a), await hit(a), await hit(a)];
    expect(results.map((r) => r.isBlocked)).toEqual([false, false, false, true]);

    await redis.start();
    await waitFor(() => a['redis'].status === 'ready', {
      timeoutMs: 15_000,
      describe: () => `client status ${a['redis'].status}`,
    });
    expect(await hit(a, 'client:198.51.100.9')).toMatchObject({ totalHits: 1, isBlocked: false });
    expect(await inspector.keys('*client:198.51.100.9*')).not.toEqual([]);
  });

  describe('in the application', () => {
    let t: TestApp | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
      delete process.env.REDIS_URL;
    });

    it('REDIS_URL set: the route limits and the magic-link address limit count in Redis; close() disconnects', async () => {
      process.env.REDIS_URL = redis.url;
      const clientsWithoutApp = await connectedClients();
      t = await createTestApp();
      expect(t.app.get(ThrottlerStorage)).toBeInstanceOf(RedisThrottlerStorage);
      const appId = (await seedApp(t)).id;

      const res = await t.http.post('/auth/magic-link', { email: 'ada@example.com', appId });
      expect(res.status).toBe(200);
      // The link is sent after the answer (same timing for known and unknown addresses).
      await t.app.get(MagicLinkService).idle();
      const keys = await inspector.keys('*');
      // The per-client budget, the route limit and the per-address limit (an HMAC, never the address).
      expect(keys.some((key) => key.includes('client:'))).toBe(true);
      expect(keys.some((key) => key.includes('magic-link-address:'))).toBe(true);
      expect(keys.filter((key) => /@|example/i.test(key))).toEqual([]);

      // The app's clients (the throttler's, the credential changes' publisher and subscriber) all close.
      expect(await connectedClients()).toBeGreaterThan(clientsWithoutApp);
      await t.close();
      t = undefined;
      expect(await connectedClients()).toBe(clientsWithoutApp);
    });
  });

  /** Clients connected to the server, the inspector included. */
  async function connectedClients(): Promise<number> {
    const list = (await inspector.client('LIST')) as string;
    return list.trim().split('\n').length;
  }
});
