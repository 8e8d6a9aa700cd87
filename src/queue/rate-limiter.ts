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

  /** Resolves when the caller may send one message. */
  async acquire(): Promise<void> {
    if (this.perSecond <= 0) return;
    const now = this.now();
    const slot = Math.max(now, this.nextFreeAt);
    this.nextFreeAt = slot + 1000 / this.perSecond;
    const wait = slot - now;
    // Unref'd: a slot waiting for its turn never keeps a stopping process alive (the stop releases its job).
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
  }
}
