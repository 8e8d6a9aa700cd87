import type { KindSettings } from '../../queue/queue-kind';

/**
 * The e-mail kind's settings (`EMAIL_KIND`), as a test may give them: `concurrency` is also the SMTP pool's
 * connection count; `scanSize` due jobs get one suppression check. What a test leaves out is read from the
 * configuration.
 */
export type EmailWorkerOptions = Partial<KindSettings> &
  Pick<KindSettings, 'concurrency' | 'ratePerSecond' | 'leaseMs' | 'scanSize' | 'rescanAfterMs'> &
  Pick<KindSettings, 'finishBatchSize' | 'backoff'>;

/** The options object of the e-mail kind (a test may replace or change it). */
export const EMAIL_WORKER_OPTIONS = Symbol('EMAIL_WORKER_OPTIONS');
