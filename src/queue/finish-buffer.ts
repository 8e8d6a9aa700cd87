import type { Logger } from '@nestjs/common';
import type { Finished } from './lease-queue.store';

/** Waits between tries of an outcome write that failed: 100 ms doubling up to 5 s. */
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Collects outcomes and writes them in batches (one round trip per batch instead of one per job). A write
 * that fails (a transient error, a replica-set election) is tried again with backoff, never dropped: the
 * outcome of work already done is the one thing the queue cannot redo. Only a worker stopping past its
 * limit gives up (`giveUpAt`); those jobs then lapse and follow the kind's rule.
 */
export class FinishBuffer<Outcome, F extends Finished<Outcome>> {
  private pending: F[] = [];
  /** Set when the worker must stop: writes still failing then are given up. */
  giveUpAt = Infinity;

  constructor(
    private readonly write: (batch: F[]) => Promise<number>,
    private readonly size: number,
    private readonly logger: Logger,
    private readonly written: (batch: F[], recorded: number) => void,
  ) {}

  async add(job: F): Promise<void> {
    this.pending.push(job);
    if (this.pending.length >= this.size) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const recorded = await this.writeWithRetries(batch);
    if (recorded !== null) this.written(batch, recorded);
  }

  private async writeWithRetries(batch: F[]): Promise<number | null> {
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
