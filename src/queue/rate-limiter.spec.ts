import { RateLimiter } from './rate-limiter';

describe('RateLimiter', () => {
  it('lets sends through at most at the configured rate', async () => {
    const limiter = new RateLimiter(50);
    const started = Date.now();
    await Promise.all(Array.from({ length: 11 }, () => limiter.acquire()));
    // 11 sends at 50/s: the last one may leave 10 × 20 ms after the first.
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
  });

  it('does not wait when the rate is unlimited', async () => {
    let clockReads = 0;
    const limiter = new RateLimiter(0, () => ++clockReads);
    await Promise.all(Array.from({ length: 100 }, () => limiter.acquire()));
    expect(clockReads).toBe(0);
  });
});
