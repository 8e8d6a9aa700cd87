import { type BackoffPolicy, retryDelayMs } from './backoff';

/**
 * An attempt that no retry can change (a refusal, a message that can never be composed): the job is dead
 * at once. The one way a handler or what it calls marks a failure final; a kind may add its transports'
 * own signs (`RetryPolicy.isPermanent`, e.g. an SMTP 5xx answer).
 */
export class PermanentJobError extends Error {}

/** A kind's retry policy (docs/queue.md, "Retries"). */
export interface RetryPolicy<Job> {
  /** Attempts before the job is dead (read per job: a job may carry its own). */
  maxAttempts(job: Job): number;
  /** Read at each failure, so changed settings apply at once. */
  backoff(): BackoffPolicy;
  /** Errors besides PermanentJobError that no retry can change. */
  isPermanent?(error: unknown): boolean;
}

/** The outcome of a failed attempt: due again after the backoff, or dead. */
export type FailedAttempt =
  { status: 'failed'; error: string; retryAt: Date } | { status: 'dead'; error: string };

/** What becomes of a job whose attempt threw `error` (its `attempts` count this attempt). */
export function failedAttempt<Job extends { attempts: number }>(
  policy: RetryPolicy<Job>,
  job: Job,
  error: unknown,
  now = Date.now(),
): FailedAttempt {
  const message = error instanceof Error ? error.message : String(error);
  const permanent = error instanceof PermanentJobError || policy.isPermanent?.(error) === true;
  if (permanent || job.attempts >= policy.maxAttempts(job)) return { status: 'dead', error: message };
  return {
    status: 'failed',
    error: message,
    retryAt: new Date(now + retryDelayMs(job.attempts, policy.backoff())),
  };
}
