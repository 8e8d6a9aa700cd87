import type { Logger } from '@nestjs/common';
import type { Finished, Postponed } from './lease-queue.store';

/** Waits between tries of an outcome write that failed: 100 ms doubling up to 5 s. */
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * The longest an outcome waits in the buffer before it is written, however few have come: what a killed
 * worker can take with it beyond its jobs in flight is what this window holds.
 */
export const FINISH_WINDOW_MS = 100;

/**
 * Collects outcomes and writes them in batches (one round trip per batch instead of one per job): a batch
 * is written once it is full, or `FINISH_WINDOW_MS` after its first outcome, whichever comes first. Under
 * load batches fill before the window ends; when few jobs finish, each still reaches the database within
 * the window, so a worker killed then leaves few sent messages without a recorded outcome. A write that
 * fails (a transient error, a replica-set election) is tried again with backoff, never dropped: the
 * outcome of work already done is the one thing the queue cannot redo. Only a worker stopping past its
 * limit gives up (`giveUpAt`); those jobs then lapse and follow the kind's rule.
 */
export class FinishBuffer<Outcome, F extends Finished<Outcome>> {
  private pending: (F | Postponed)[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Writes under way (a full batch, or one the window sent), awaited by `flush`. */
  private readonly writing = new Set<Promise<void>>();
  /** Set when the worker must stop: writes still failing then are given up. */
  giveUpAt = Infinity;

  constructor(
    private readonly write: (batch: (F | Postponed)[]) => Promise<number>,
    private readonly size: number,
    private readonly logger: Logger,
    private readonly written: (batch: (F | Postponed)[], recorded: number) => void,
    private readonly windowMs = FINISH_WINDOW_MS,
  ) {}

  /**
   * Buffers an outcome; the slot that fills a batch waits for its write (back-pressure on a slow database).
   */
  async add(job: F | Postponed): Promise<void> {
    this.pending.push(job);
    if (this.pending.length >= this.size) {
      await this.writeBatch();
      return;
    }
    if (!this.timer) {
      // Unref'd: a window still open never keeps a process alive (a stop flushes what is left).
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.writeBatch().catch((error: unknown) =>
          this.logger.error(`Recording outcomes failed: ${(error as Error).message}`),
        );
      }, this.windowMs).unref();
    }
  }

  /** Writes what is buffered and waits for every write under way. */
  async flush(): Promise<void> {
    await this.writeBatch();
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }

  private writeBatch(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    const write = this.writeWithRetries(batch).then((recorded) => {
      if (recorded !== null) this.written(batch, recorded);
    });
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write)).catch(() => undefined);
    return write;
  }

  private async writeWithRetries(batch: (F | Postponed)[]): Promise<number | null> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.write(batch);
      } catch (error) {
        const waitMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt);
        if (Date.now() + waitMs > this.giveUpAt) {
          this.logger.error(
            `${batch.length} outcome(s) not recorded before the worker stopped: ${(error as Error).message}`,
          );
          return null;
        }
        this.logger.warn(`Outcome write failed (${(error as Error).message}); trying again in ${waitMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }
}
