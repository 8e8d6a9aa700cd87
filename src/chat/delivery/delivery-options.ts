import type { BackoffPolicy } from '../../queue/backoff';

export interface ChatDeliveryOptions {
  /** How long one webhook call may take, answer included. */
  timeoutMs: number;
  /** Attempts per notification before it is `dead`. */
  maxAttempts: number;
  backoff: BackoffPolicy;
  /** How long a claimed notification stays with its worker; a lapsed lease is reaped by any worker. */
  leaseMs: number;
  /** Due notifications read per scan of the outbox. */
  scanSize: number;
  /** Webhook calls in flight at once, so one slow receiver does not hold up the others. */
  concurrency: number;
  /** How often the reaper's timer looks for lapsed leases (default 30 s). */
  reapEveryMs?: number;
}

export const CHAT_DELIVERY_OPTIONS = Symbol('CHAT_DELIVERY_OPTIONS');

/** 6 attempts over about a quarter of an hour: 30 s, 1, 2, 4 and 8 min between them (with jitter). */
export const DEFAULT_CHAT_DELIVERY_OPTIONS: ChatDeliveryOptions = {
  timeoutMs: 5_000,
  maxAttempts: 6,
  backoff: { baseMs: 30_000, maxMs: 600_000 },
  leaseMs: 60_000,
  scanSize: 100,
  concurrency: 5,
};
