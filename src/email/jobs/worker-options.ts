import type { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
import type { BackoffPolicy } from '../../queue/backoff';
import type { WorkerSettings } from '../../queue/polling-worker';

/**
 * The e-mail worker's tuning: the engine's settings (src/queue/polling-worker.ts) that are not read from the
 * process's timers and shutdown configuration, plus the retry policy of e-mail jobs. `concurrency` is also
 * the SMTP pool's connection count; `scanSize` due jobs get one suppression check.
 */
export type EmailWorkerOptions = Omit<
  WorkerSettings,
  'enabled' | 'intervalMs' | 'reapEveryMs' | 'shutdownMs'
> & {
  backoff: BackoffPolicy;
  /** How often the reaper's timer looks for lapsed leases (default 5 s: a dead worker's heartbeat). */
  reapEveryMs?: number;
};

export const EMAIL_WORKER_OPTIONS = Symbol('EMAIL_WORKER_OPTIONS');

export function workerOptionsFromConfig(config: ConfigService<AppConfig, true>): EmailWorkerOptions {
  return {
    concurrency: config.get('EMAIL_WORKER_CONCURRENCY', { infer: true }),
    ratePerSecond: config.get('EMAIL_WORKER_RATE_PER_SECOND', { infer: true }),
    leaseMs: config.get('EMAIL_WORKER_LEASE_MS', { infer: true }),
    scanSize: 500,
    rescanAfterMs: 2_000,
    finishBatchSize: 50,
    backoff: { baseMs: 30_000, maxMs: 3_600_000 },
  };
}
