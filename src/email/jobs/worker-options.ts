import type { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
import type { BackoffPolicy } from '../../queue/backoff';
import type { CircuitSettings } from '../../queue/circuit';

export interface EmailWorkerOptions {
  /** Messages in flight at once (also the SMTP pool's connection count). */
  concurrency: number;
  /** Messages per second across the worker; 0 = no limit. */
  ratePerSecond: number;
  /** How long a claimed job stays this worker's; a lapsed lease is reaped by any worker. */
  leaseMs: number;
  /** Due jobs read per batch of a scan of the queue (one suppression check each). */
  scanSize: number;
  /**
   * How long the worker keeps working through one scan before it scans again (default 2 s): the bound on
   * how long a job that fell due since (a transactional mail during a campaign) waits.
   */
  rescanAfterMs: number;
  /** Outcomes recorded per database write. */
  finishBatchSize: number;
  backoff: BackoffPolicy;
  /** How often the reaper's timer looks for lapsed leases (default a minute). */
  reapEveryMs?: number;
  /** Probe waits while the SMTP server is unreachable (default: 1 s doubling up to 30 s). */
  circuit?: CircuitSettings;
}

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
