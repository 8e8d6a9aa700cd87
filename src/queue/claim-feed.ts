import type { Claimed } from './lease-queue.store';
import type { DueJob } from './queue-kind';

/**
 * Hands claimed jobs to a worker's slots, claiming `batchSize` scanned jobs in one go (one claim round trip
 * per batch instead of one per job). The next batch is claimed while the slots still have half a batch to
 * start, so they do not stand idle during the round trip; the worker holds at most two batches beyond the
 * jobs in flight. Scanned jobs come from `nextDue` (a batch of the scan at a time, empty once it is
 * exhausted); once the scan is `stale` (checked after its first claim), the rest of it is left for the next
 * scan. Once the worker stops, it claims no more and hands out nothing: what it holds is released
 * (`leftovers`).
 */
export class ClaimFeed<Job, Due extends DueJob> {
  private due: Due[] = [];
  private scanEnded = false;
  private refills = 0;
  private claimed: Claimed<Job>[] = [];
  private refill: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;

  constructor(
    private readonly nextDue: () => Promise<Due[]>,
    private readonly stale: () => boolean,
    private readonly batchSize: number,
    private readonly claim: (batch: Due[]) => Promise<Claimed<Job>[]>,
    /** Off for a probe: it claims one job and only then, if it went well, the next. */
    private readonly prefetch = true,
  ) {}

  async next(stopping: () => boolean): Promise<Claimed<Job> | undefined> {
    for (;;) {
      if (stopping()) return undefined;
      if (this.claimed.length > 0) break;
      if (this.failure) throw this.failure.error;
      if (this.refill) await this.refill;
      else if (this.exhausted()) return undefined;
      else this.startRefill();
    }
    const next = this.claimed.shift();
    if (this.prefetch && this.claimed.length < this.batchSize / 2) this.startRefill();
    return next;
  }

  /** The jobs claimed and not handed out (a claim in flight included), to release at a stop. */
  async leftovers(): Promise<Claimed<Job>[]> {
    while (this.refill) await this.refill;
    return this.claimed.splice(0);
  }

  /** True once the scan has no more jobs for this feed: read to its end, or stale after a first claim. */
  private exhausted(): boolean {
    if (this.refills > 0 && !this.scanEnded && this.stale()) {
      this.scanEnded = true;
      this.due = [];
    }
    return this.scanEnded && this.due.length === 0;
  }

  /**
   * A failed scan or claim is kept and thrown to every slot once the jobs already claimed are handed out.
   * No slot may be waiting when a prefetch fails, hence not a rejected promise.
   */
  private startRefill(): void {
    if (this.refill || this.failure || this.exhausted()) return;
    this.refills += 1;
    this.refill = this.takeDue()
      .then((batch) => (batch.length > 0 ? this.claim(batch) : []))
      .then((jobs) => void this.claimed.push(...jobs))
      .catch((error: unknown) => void (this.failure = { error }))
      .finally(() => (this.refill = null));
  }

  /** The next `batchSize` scanned jobs, reading the scan's next batch when those in hand run out. */
  private async takeDue(): Promise<Due[]> {
    if (this.due.length < this.batchSize && !this.scanEnded) {
      const more = await this.nextDue();
      if (more.length === 0) this.scanEnded = true;
      this.due.push(...more);
    }
    return this.due.splice(0, this.batchSize);
  }
}
