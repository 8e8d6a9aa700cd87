import type { KindSettings } from '../../queue/queue-kind';

/** The chat kind's settings (`CHAT_KIND`), and how long one webhook call may take. */
export type ChatDeliveryOptions = Partial<KindSettings> &
  Pick<KindSettings, 'maxAttempts' | 'backoff' | 'leaseMs' | 'scanSize' | 'concurrency'> & {
    /** How long one webhook call may take, answer included. */
    timeoutMs: number;
  };

/** The options object of the chat kind (a test may replace or change it). */
export const CHAT_DELIVERY_OPTIONS = Symbol('CHAT_DELIVERY_OPTIONS');

/**
 * 6 attempts over about a quarter of an hour: 30 s, 1, 2, 4 and 8 min between them (with jitter); five
 * webhook calls in flight at once, so one slow receiver does not hold up the others.
 */
export const DEFAULT_CHAT_DELIVERY_OPTIONS: ChatDeliveryOptions = {
  timeoutMs: 5_000,
  maxAttempts: 6,
  backoff: { baseMs: 30_000, maxMs: 600_000 },
  leaseMs: 60_000,
  scanSize: 100,
  concurrency: 5,
  finishBatchSize: 5,
  reapEveryMs: 30_000,
};
