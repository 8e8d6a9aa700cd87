import { setMaxListeners } from 'node:events';

/**
 * Spaces out sends to at most `perSecond` messages a second across the worker's concurrent slots (each
 * caller reserves the next free instant). 0 means no limit.
 */
export class RateLimiter {
  private nextFreeAt = 0;

  constructor(
    readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Resolves when the caller may send one message, or at once when `stop` is aborted (a stopping worker
   * starts nothing more). A wait attaches to `stop` only while it lasts: a worker lives for the process and
   * calls this once per job, so anything left attached per call would grow with every message it sent.
   */
  async acquire(stop?: AbortSignal): Promise<void> {
    if (this.perSecond <= 0 || stop?.aborted) return;
    const now = this.now();
    const slot = Math.max(now, this.nextFreeAt);
    this.nextFreeAt = slot + 1000 / this.perSecond;
    const wait = slot - now;
    if (wait > 0) await waitOrStop(wait, stop);
  }
}

/**
 * The stop a worker hands to its limiters: every slot of every lane may wait on it at once, past the
 * 10 listeners after which Node warns of a leak (each wait detaches when it ends).
 */
export function stopForWaits(): AbortController {
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  return stop;
}

/** Resolves after `ms`, or when `stop` aborts; the timer and the listener are removed either way. */
function waitOrStop(ms: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    // Unref'd: a slot waiting for its turn never keeps a stopping process alive (the stop releases its job).
    const timer = setTimeout(done, ms).unref();
    stop?.addEventListener('abort', done, { once: true });
  });
}
