import { Injectable } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { ChatBacklog } from '../chat/delivery/chat-backlog';
import { EmailQueueStatus } from '../email/jobs/email-queue-status';
import type { HealthRecord, LivenessRecord } from './health.dto';
import { readServiceVersion } from './service-version';

/** Every database call of the probe is bounded by this: a dead server must not hold it for the driver's 5 s. */
const PROBE_TIMEOUT_MS = 2_000;

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

@Injectable()
export class HealthService {
  private readonly version = readServiceVersion();

  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly emailQueue: EmailQueueStatus,
    private readonly chatBacklog: ChatBacklog,
  ) {}

  /** Readiness: the spec's record plus the queue and outbox figures (counted only when the ping answered). */
  async check(): Promise<HealthRecord> {
    const connected = await bounded(this.ping(), false);
    const [queue, chatBacklog] = connected
      ? await Promise.all([
          bounded(this.emailQueue.depth(PROBE_TIMEOUT_MS), null),
          bounded(this.chatBacklog.count(PROBE_TIMEOUT_MS), null),
        ])
      : [null, null];
    const memory = process.memoryUsage();
    const worker = this.emailQueue.workerState();
    return {
      status: connected ? 'ok' : 'error',
      timestamp: new Date().toISOString(),
      uptime: process.uptime(),
      memory: {
        rss: megabytes(memory.rss),
        heapUsed: megabytes(memory.heapUsed),
        heapTotal: megabytes(memory.heapTotal),
      },
      database: { connected, modelsCount: this.connection.modelNames().length },
      version: this.version,
      emailWorker: { enabled: worker.enabled, lastRun: worker.lastRun?.toISOString() ?? null, queue },
      chatBacklog,
    };
  }

  /** Liveness: the process answers. Never touches the database, so a database outage does not restart it. */
  live(): LivenessRecord {
    return { status: 'ok', uptime: process.uptime() };
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
