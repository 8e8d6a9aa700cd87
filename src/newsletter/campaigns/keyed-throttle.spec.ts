import { KeyedThrottle } from './keyed-throttle';

describe('KeyedThrottle', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const setup = () => {
    const runs: string[] = [];
    const pending = new Map<string, () => void>();
    const throttle = new KeyedThrottle(
      1_000,
      (key) => {
        runs.push(key);
        return new Promise<void>((resolve) => pending.set(key, resolve));
      },
      () => undefined,
    );
    return { throttle, runs, release: (key: string) => pending.get(key)?.() };
  };

  it('runs at once, then at most once per interval per key, and once more after the last request', async () => {
    const { throttle, runs, release } = setup();
    throttle.request('a');
    throttle.request('b');
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toEqual(['a', 'b']);
    throttle.request('a'); // while running: one more run queued
    throttle.request('a');
    release('a');
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toEqual(['a', 'b']);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toEqual(['a', 'b', 'a']);
  });

  it('flush starts waiting runs now and waits for them', async () => {
    const { throttle, runs, release } = setup();
    throttle.request('a');
    await jest.advanceTimersByTimeAsync(0);
    release('a');
    await jest.advanceTimersByTimeAsync(0);
    throttle.request('a'); // inside the interval: waits
    expect(runs).toEqual(['a']);
    const flushed = throttle.flush();
    expect(runs).toEqual(['a', 'a']);
    release('a');
    await flushed;
  });

  it('spaces runs out to ten times the last run’s duration', async () => {
    const { throttle, runs, release } = setup();
    throttle.request('a');
    await jest.advanceTimersByTimeAsync(0);
    await jest.advanceTimersByTimeAsync(300); // the run takes 300 ms
    release('a');
    await jest.advanceTimersByTimeAsync(0);
    throttle.request('a');
    await jest.advanceTimersByTimeAsync(2_000);
    expect(runs).toEqual(['a']);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toEqual(['a', 'a']);
  });

  it('starts an urgent request at once, or right after the run in progress', async () => {
    const { throttle, runs, release } = setup();
    throttle.request('a');
    await jest.advanceTimersByTimeAsync(0);
    throttle.request('a', true); // during the run: next one right after it
    release('a');
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toEqual(['a', 'a']);
    release('a');
    await jest.advanceTimersByTimeAsync(0);
    throttle.request('a'); // waits for the spacing...
    throttle.request('a', true); // ...unless urgent
    expect(runs).toEqual(['a', 'a', 'a']);
  });
});
