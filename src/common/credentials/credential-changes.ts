import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectConnection } from '@nestjs/mongoose';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { performance } from 'node:perf_hooks';
import type { AppConfig } from '../../config/env';
import { REQUEST_QUERY_MAX_TIME_MS } from '../database/request-time-limit';
import { CredentialCache, type CredentialSource } from './credential-cache';

/** One document per source, `{_id: source, v}`: `v` goes up with every change that may revoke. */
export const CREDENTIAL_STAMPS_COLLECTION = 'credential_stamps';
/** The Redis channel the instances announce changes on (`<source>:<stamp>`). */
export const CREDENTIAL_CHANNEL = 'credential-changes';
const SOURCES: readonly CredentialSource[] = ['users', 'api-keys', 'apps'];

/** Longest time a cached credential is served without the stamps having been read (or a message heard). */
export const FRESHNESS_MS = 1_000;
/**
 * With the Redis subscription up, changes arrive as messages at once; the stamps are still read this often,
 * in case a message was lost while the connection looked up.
 */
const SUBSCRIBED_FRESHNESS_MS = 10_000;
/** Entries per cache (a staff user, an API key or a publishable key each): a few MB at most. */
export const CREDENTIAL_CACHE_CAPACITY = 10_000;

/**
 * Verified credentials served from memory, and how a change that revokes one reaches every instance within
 * FRESHNESS_MS (docs/architecture.md "Credentials and roles"). A revoking write calls `announce`, which
 * raises the source's stamp in the database and publishes it on Redis when REDIS_URL is set. An instance
 * serves its cached entries only while it has read the stamps within the last second, or while its Redis
 * subscription is up (then a message clears them at once); otherwise the next request reads the stamps first
 * (one command by `_id`, shared by the requests waiting for it) and a changed stamp clears that source's
 * caches.
 */
@Injectable()
export class CredentialChanges implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Credentials');
  private readonly caches: CredentialCache<unknown>[] = [];
  private readonly stamps = new Map<CredentialSource, number>();
  /** `performance.now()` at the start of the last stamp read that succeeded. */
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | null = null;
  private readonly subscriber?: Redis;
  private readonly publisher?: Redis;
  private subscribed = false;

  constructor(
    @InjectConnection() private readonly connection: Connection,
    config: ConfigService<AppConfig, true>,
  ) {
    const url = config.get('REDIS_URL', { infer: true });
    if (!url) return;
    const options = {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      commandTimeout: FRESHNESS_MS,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
    };
    this.publisher = new Redis(url, { ...options, enableOfflineQueue: false });
    this.subscriber = new Redis(url, options);
    this.publisher.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    // Messages missed while the subscription was down are covered by the stamps: drop everything once.
    this.subscriber.on('ready', () => {
      this.subscribed = true;
      this.clearAll();
    });
    this.subscriber.on('close', () => {
      if (this.subscribed) this.logger.warn('Redis subscription lost: credentials re-read every second');
      this.subscribed = false;
    });
    this.subscriber.on('message', (_channel: string, message: string) => this.heard(message));
  }

  async onModuleInit(): Promise<void> {
    if (!this.subscriber || !this.publisher) return;
    try {
      await Promise.all([this.publisher.connect(), this.subscriber.connect()]);
      await this.subscriber.subscribe(CREDENTIAL_CHANNEL);
    } catch (error) {
      this.logger.error(`Redis unreachable (${(error as Error).message}): credentials re-read every second`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    for (const client of [this.subscriber, this.publisher]) {
      if (client?.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client?.disconnect();
    }
  }

  /** A cache of this process whose entries were read from `sources`. */
  cache<V>(sources: readonly CredentialSource[]): CredentialCache<V> {
    const cache = new CredentialCache<V>(sources, CREDENTIAL_CACHE_CAPACITY);
    this.caches.push(cache);
    return cache;
  }

  /** Whether cached credentials may be served now, without starting a read of the stamps. */
  fresh(): boolean {
    const window = this.subscribed ? SUBSCRIBED_FRESHNESS_MS : FRESHNESS_MS;
    return performance.now() - this.checkedAt < window;
  }

  /**
   * Null when cached credentials may be served now; else a promise that settles once the stamps were read
   * (and rejects when the database cannot be reached: nothing cached is served then).
   */
  current(): Promise<void> | null {
    if (this.fresh()) return null;
    return (this.checking ??= this.readStamps().finally(() => (this.checking = null)));
  }

  /**
   * After a write that may revoke a credential read from `source` (and before answering it): every instance
   * drops what it cached from that source within FRESHNESS_MS, this one at once.
   */
  async announce(source: CredentialSource): Promise<void> {
    const stamp = await this.collection().findOneAndUpdate(
      { _id: source },
      { $inc: { v: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    const value = stamp?.v ?? 0;
    this.changed(source, Math.max(value, this.stamps.get(source) ?? 0));
    if (!this.publisher) return;
    await this.publisher.publish(CREDENTIAL_CHANNEL, `${source}:${value}`).catch((error: Error) => {
      this.logger.warn(`Could not announce a ${source} change on Redis (${error.message})`);
    });
  }

  private collection() {
    return this.connection.db!.collection<{ _id: CredentialSource; v: number }>(CREDENTIAL_STAMPS_COLLECTION);
  }

  private async readStamps(): Promise<void> {
    const started = performance.now();
    const found = await this.collection()
      .find({ _id: { $in: [...SOURCES] } }, { maxTimeMS: REQUEST_QUERY_MAX_TIME_MS })
      .toArray();
    for (const source of SOURCES) {
      const value = found.find((stamp) => stamp._id === source)?.v ?? 0;
      if (this.stamps.get(source) !== value) this.changed(source, value);
    }
    this.checkedAt = started;
  }

  private heard(message: string): void {
    const [source, value] = message.split(':');
    if (!SOURCES.includes(source as CredentialSource) || !/^\d+$/.test(value ?? '')) return;
    const known = this.stamps.get(source as CredentialSource) ?? 0;
    this.changed(source as CredentialSource, Math.max(Number(value), known));
  }

  /**
   * Clears the source's caches and remembers its stamp. Every write a stamp stands for happened before it
   * was raised, so whatever is read after this clear includes them.
   */
  private changed(source: CredentialSource, stamp: number): void {
    this.stamps.set(source, stamp);
    for (const cache of this.caches) if (cache.sources.includes(source)) cache.clear();
  }

  private clearAll(): void {
    for (const cache of this.caches) cache.clear();
  }
}
