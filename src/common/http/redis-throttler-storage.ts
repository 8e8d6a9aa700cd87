import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { type ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { Redis } from 'ioredis';

type StorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** A counter update slower than this counts as Redis being unreachable (a request must not hang on it). */
const COMMAND_TIMEOUT_MS = 1_000;
/** After a failed or timed-out command, requests count locally this long before Redis is tried again. */
const RETRY_AFTER_FAILURE_MS = 5_000;
/** How long start-up waits for the first connection before serving with local counters. */
const STARTUP_WAIT_MS = 5_000;

/**
 * The throttler's counters in Redis (REDIS_URL), shared by every instance: route limits, the per-client
 * budget and the magic-link per-address limit all count here. The atomic counting is
 * `@nest-lab/throttler-storage-redis`'s (one Lua script per hit).
 *
 * Redis unreachable: the limits are still enforced, by this process's own in-memory counters, until Redis
 * answers again (docs/decisions/operations-redis-rate-limits-and-docker.md). Rate limits are a defence, not
 * the service: the API stays up, and a client gets at most the limit once per instance, never an unlimited
 * run. Commands fail at once while disconnected (no offline queue) and after COMMAND_TIMEOUT_MS when Redis
 * hangs; after a failure, Redis is tried again by one request every RETRY_AFTER_FAILURE_MS, so a hung Redis
 * delays a request now and then, not each one.
 */
export class RedisThrottlerStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private readonly shared: ThrottlerStorageRedisService;
  private readonly local = new ThrottlerStorageService();
  /** Logs once per outage, not once per request. */
  private degraded = false;
  /** The connection's last error (refused, timed out, …), for the outage's log line. */
  private lastError = '';
  /** Until then (epoch ms) counts stay local after a command failed on a connection that looked ready. */
  private retryAt = 0;

  constructor(url: string) {
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: STARTUP_WAIT_MS,
      // Reconnect for as long as the process runs, at most every 2 s.
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    });
    // Reported once per outage by `degrade`; without a listener ioredis would print every retry's error.
    this.redis.on('error', (error: Error) => (this.lastError = error.message));
    // Given an existing client, the package leaves closing it to us (onApplicationShutdown).
    this.shared = new ThrottlerStorageRedisService(this.redis);
  }

  /** The address the counters live at, without the password (for logs). */
  get location(): string {
    const { host, port, db } = this.redis.options;
    return `${host}:${port}/${db ?? 0}`;
  }

  /** Connects before the first request; an unreachable Redis is logged and does not stop start-up. */
  async onModuleInit(): Promise<void> {
    try {
      await this.redis.connect();
      this.logger.log(`Rate-limit counters in Redis at ${this.location}`);
    } catch (error) {
      this.degrade(this.lastError ? new Error(this.lastError) : error);
    }
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<StorageRecord> {
    if (this.redis.status !== 'ready') {
      this.degrade(new Error(this.lastError || `connection ${this.redis.status}`));
    } else if (Date.now() >= this.retryAt) {
      try {
        const record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
        this.recover();
        return record;
      } catch (error) {
        this.retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
        this.degrade(error);
      }
    }
    return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
  }

  async onApplicationShutdown(): Promise<void> {
    this.local.onApplicationShutdown();
    // QUIT when connected (pending replies first); a client still trying to connect is just stopped.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.log(`Redis at ${this.location} answers again: rate-limit counters are shared again`);
  }

  private degrade(error: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.error(
      `Redis at ${this.location} unreachable (${reason}): rate limits count per instance until it answers`,
    );
  }
}
