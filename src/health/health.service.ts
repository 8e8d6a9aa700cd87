import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { DatabaseAvailability } from '../database/database-availability';
import { ChatBacklog } from '../chat/delivery/chat-backlog';
import { EmailQueueStatus, type QueueDepth } from '../email/jobs/email-queue-status';
import type { ChatBacklogRecord, HealthRecord, LivenessRecord } from './health.dto';
import { readServiceVersion } from './service-version';

/**
 * Every database call of the probe is bounded by this: a dead server must not hold it for the driver's 5 s.
 */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * How often the database figures are refreshed in the background (docs/decisions/operations-cheap-health.md).
 */
export const HEALTH_REFRESH_MS = 10_000;

/**
 * How long a memory reading is reused: `process.memoryUsage()` reads /proc on every call
 * (docs/decisions/operations-cheap-health.md).
 */
const MEMORY_SAMPLE_MS = 1_000;

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** What the last background refresh found. */
interface DatabaseFigures {
  /** The ping answered within PROBE_TIMEOUT_MS. */
  pinged: boolean;
  queue: QueueDepth | null;
  chatBacklog: ChatBacklogRecord | null;
  checkedAt: Date;
}

/**
 * The health record. A request reads figures a background refresh keeps (every HEALTH_REFRESH_MS, each call
 * bounded by PROBE_TIMEOUT_MS), so `/health` sends the database nothing however often it is called; the
 * connection's own state (the driver's monitor, no round trip) is checked per request, so a lost database
 * and its return show within a second without waiting for the next refresh.
 */
@Injectable()
export class HealthService implements OnApplicationShutdown {
  private readonly version = readServiceVersion();
  private figures?: DatabaseFigures;
  /** The first refresh, started by the first request: a process nobody probes (a worker) never counts. */
  private started?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private memory?: { record: HealthRecord['memory']; sampledAt: number };

  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly emailQueue: EmailQueueStatus,
    private readonly chatBacklog: ChatBacklog,
    private readonly availability: DatabaseAvailability,
  ) {}

  /** Readiness: the contract's record plus the queue and outbox figures of the last refresh. */
  async check(): Promise<HealthRecord> {
    this.started ??= this.refresh().then(() => this.schedule());
    await this.started;
    const figures = this.figures!;
    const connected = this.databaseConnected();
    const worker = this.emailQueue.workerState();
    return {
      status: connected ? 'ok' : 'error',
      timestamp: new Date().toISOString(),
      uptime: process.uptime(),
      memory: this.memoryRecord(),
      database: { connected, modelsCount: this.connection.modelNames().length },
      version: this.version,
      emailWorker: {
        enabled: worker.enabled,
        lastRun: worker.lastRun?.toISOString() ?? null,
        queue: connected ? figures.queue : null,
      },
      chatBacklog: connected ? figures.chatBacklog : null,
      checkedAt: figures.checkedAt.toISOString(),
    };
  }

  /**
   * From the driver's own monitoring (checks every 500 ms; DatabaseAvailability), not from the last refresh's
   * ping: a lost database shows within a second, and so does its return.
   */
  private databaseConnected(): boolean {
    return this.availability.reachable;
  }

  /** Liveness: the process answers. Never touches the database, so a database outage does not restart it. */
  live(): LivenessRecord {
    return { status: 'ok', uptime: process.uptime() };
  }

  /** The process's memory, read at most once per MEMORY_SAMPLE_MS however often the probe is called. */
  private memoryRecord(): HealthRecord['memory'] {
    const now = Date.now();
    if (!this.memory || now - this.memory.sampledAt >= MEMORY_SAMPLE_MS) {
      const usage = process.memoryUsage();
      const record = {
        rss: megabytes(usage.rss),
        heapUsed: megabytes(usage.heapUsed),
        heapTotal: megabytes(usage.heapTotal),
      };
      this.memory = { record, sampledAt: now };
    }
    return this.memory.record;
  }

  /** Pings, then counts the queue and the outbox (only when the ping answered); each call bounded. */
  async refresh(): Promise<void> {
    const pinged = await bounded(this.ping(), false);
    const [queue, chatBacklog] = pinged
      ? await Promise.all([
          bounded(this.emailQueue.depth(PROBE_TIMEOUT_MS), null),
          bounded(this.chatBacklog.count(PROBE_TIMEOUT_MS), null),
        ])
      : [null, null];
    this.figures = { pinged, queue, chatBacklog, checkedAt: new Date() };
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The next refresh, once this one ended (never two at once); unref'd: it never keeps the process alive. */
  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.refresh().finally(() => this.schedule()), HEALTH_REFRESH_MS);
    this.timer.unref();
  }

  private async ping(): Promise<boolean> {
    const db = this.connection.db;
    if (!db) return false;
    await db.command({ ping: 1 });
    return true;
  }
}

/**
 * The promise's value, or `fallback` when it fails or takes longer than PROBE_TIMEOUT_MS. The timer is
 * cleared either way, so a probe leaves nothing pending behind it.
 */
async function bounded<T, F>(work: Promise<T>, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work.catch(() => fallback), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
