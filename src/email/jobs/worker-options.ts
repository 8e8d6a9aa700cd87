import type { Env } from '../../config/env';
import type { BackoffPolicy } from './backoff';

export interface EmailWorkerOptions {
  /** Messages in flight at once (also the SMTP pool's connection count). */
  concurrency: number;
  /** Messages per second across the worker; 0 = no limit. */
  ratePerSecond: number;
  /** How long a claimed job stays this worker's; a lapsed lease is reaped by any worker. */
  leaseMs: number;
  /** Due jobs read per scan of the queue. */
  scanSize: number;
  /** Outcomes recorded per database write. */
  finishBatchSize: number;
  backoff: BackoffPolicy;
}

export const EMAIL_WORKER_OPTIONS = Symbol('EMAIL_WORKER_OPTIONS');

export function workerOptionsFromEnv(env: Env): EmailWorkerOptions {
  return {
    concurrency: env.EMAIL_WORKER_CONCURRENCY,
    ratePerSecond: env.EMAIL_WORKER_RATE_PER_SECOND,
    leaseMs: env.EMAIL_WORKER_LEASE_MS,
    scanSize: 500,
    finishBatchSize: 50,
    backoff: { baseMs: 30_000, maxMs: 3_600_000 },
  };
}
