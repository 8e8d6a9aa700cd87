import { retryDelayMs } from './backoff';

describe('retryDelayMs', () => {
  const policy = { baseMs: 1000, maxMs: 60_000 };

  it('doubles the window with each attempt', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, policy, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, policy, () => 0))).toEqual([500, 1000, 2000, 4000]);
  });

  it('never waits less than the previous attempt, whatever the jitter', () => {
    for (let attempt = 1; attempt < 10; attempt += 1) {
      const longestBefore = retryDelayMs(attempt, policy, () => 1);
      const shortestAfter = retryDelayMs(attempt + 1, policy, () => 0);
      expect(shortestAfter).toBeGreaterThanOrEqual(Math.min(longestBefore, policy.maxMs / 2));
    }
  });

  it('caps the wait', () => {
    expect(retryDelayMs(30, policy, () => 1)).toBe(60_000);
  });
});
