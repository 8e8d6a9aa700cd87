export interface BackoffPolicy {
  /** Delay before the second attempt. */
  baseMs: number;
  /** No retry waits longer than this. */
  maxMs: number;
}

/**
 * Exponential backoff with "equal jitter": after attempt n the job waits between half and all of
 * base·2^(n-1) (capped). The random half spreads retries of many jobs that failed together, and the fixed
 * half keeps every wait at least as long as the one before it.
 */
export function retryDelayMs(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const half = exponential / 2;
  return Math.round(half + random() * half);
}
