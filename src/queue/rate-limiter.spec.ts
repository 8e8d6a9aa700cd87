import { getEventListeners } from 'node:events';
import { RateLimiter, stopForWaits } from './rate-limiter';

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

  it('leaves nothing attached to the stop signal once its waits are over', async () => {
    // A worker calls acquire once per job for as long as the process lives.
    const stop = stopForWaits(); // 20 slots waiting at once: more listeners than Node's default of 10
    const limiter = new RateLimiter(1_000);
    const waits = Array.from({ length: 20 }, () => limiter.acquire(stop.signal));
    expect(getEventListeners(stop.signal, 'abort').length).toBeGreaterThan(10);
    await Promise.all(waits);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('ends a wait when the stop signal aborts, and detaches from it', async () => {
    const stop = new AbortController();
    const limiter = new RateLimiter(1 / 3_600);
    await limiter.acquire(stop.signal);
    const waiting = limiter.acquire(stop.signal); // an hour away
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort();
    await waiting;
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    await limiter.acquire(stop.signal); // stopped: no wait at all
  });
});
