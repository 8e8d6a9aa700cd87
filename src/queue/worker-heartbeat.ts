import { Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { QueueWorker } from './schemas/queue-worker.schema';

/** How often a running process renews its heartbeat. */
export const HEARTBEAT_EVERY_MS = 2_000;
/** How long a heartbeat holds: a process that missed this long of renewals is taken for dead. */
export const HEARTBEAT_TTL_MS = 10_000;

/** What a reaper knows of a lease's holder: alive (never reaped), dead (reaped now), or unknown. */
export type HolderState = 'alive' | 'dead' | 'unknown';

/**
 * This process's heartbeat in `queue_workers` (docs/queue.md, "Heartbeats and reaping"). Every lease the
 * process takes carries its id; while it runs, it renews `aliveUntil` every
 * HEARTBEAT_EVERY_MS, so a reaper recovers the leases of a process that died within HEARTBEAT_TTL_MS
 * instead of waiting out the lease, and never takes a lease from one that is alive.
 *
 * A lapsed heartbeat is judged only by a reaper whose own heartbeat has been renewed without a break for a
 * whole TTL: after a database outage every process's heartbeat has lapsed, and the others get a TTL to renew
 * theirs (they renew every few seconds) before anyone is taken for dead.
 */
@Injectable()
export class WorkerHeartbeat {
  /** Stamped on every lease this process takes (`workerId`). */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly logger = new Logger(WorkerHeartbeat.name);
  private readonly startedAt = new Date();
  private users = 0;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  /** Since when every renewal has succeeded (null while they fail, or before the first). */
  private renewedSince: number | null = null;
  private failing = false;

  constructor(@InjectModel(QueueWorker.name) private readonly model: Model<QueueWorker>) {}

  /** A worker of this process starts polling: the heartbeat runs while at least one does. */
  start(): void {
    this.users += 1;
    if (this.timer) return;
    this.timer = setInterval(() => void this.renew(), HEARTBEAT_EVERY_MS);
    this.timer.unref();
    void this.renew();
  }

  /**
   * A worker has stopped. Once the last one has, the heartbeat ends at once (`aliveUntil` = now): leases
   * this process could not give back are recovered by the next reaper, not a TTL later.
   */
  async stop(): Promise<void> {
    if (this.users === 0 || --this.users > 0) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
    await this.model.collection
      .updateOne({ _id: this.id } as never, { $set: { aliveUntil: new Date() } })
      .catch((error: unknown) => this.logger.warn(`Heartbeat not ended: ${(error as Error).message}`));
  }

  /** True when this process may take another's lapsed heartbeat for death (see the class comment). */
  canJudge(now = Date.now()): boolean {
    return this.renewedSince !== null && now - this.renewedSince >= HEARTBEAT_TTL_MS;
  }

  /**
   * The processes whose heartbeat lapsed, so a reaper reads only their jobs (one range read of the
   * `aliveUntil` index; an entry expires a day after its last heartbeat). None while this process may not
   * judge (see the class comment).
   */
  async lapsed(now = new Date()): Promise<string[]> {
    if (!this.canJudge(now.getTime())) return [];
    const found = await this.model.collection
      .find({ aliveUntil: { $lt: now } }, { projection: { _id: 1 } })
      .toArray();
    return found.map((doc) => String(doc._id));
  }

  /** The state of each holder named (one lookup by `_id`). */
  async holders(workerIds: string[], now = new Date()): Promise<(workerId: string) => HolderState> {
    const ids = [...new Set(workerIds)];
    const found =
      ids.length === 0
        ? []
        : await this.model.collection
            .find({ _id: { $in: ids } } as never, { projection: { aliveUntil: 1 } })
            .toArray();
    const aliveUntil = new Map(found.map((doc) => [String(doc._id), (doc.aliveUntil as Date).getTime()]));
    const judging = this.canJudge(now.getTime());
    return (workerId) => {
      const until = aliveUntil.get(workerId);
      if (until === undefined) return 'unknown';
      return until >= now.getTime() || !judging ? 'alive' : 'dead';
    };
  }

  private renew(): Promise<void> {
    this.renewing ??= this.write().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async write(): Promise<void> {
    const now = new Date();
    try {
      await this.model.collection.updateOne(
        { _id: this.id } as never,
        {
          $set: { aliveUntil: new Date(now.getTime() + HEARTBEAT_TTL_MS) },
          $setOnInsert: { host: hostname(), pid: process.pid, startedAt: this.startedAt },
        },
        { upsert: true },
      );
      // From when the write was answered: the database was surely reachable then.
      this.renewedSince ??= Date.now();
      if (this.failing) this.logger.log('Heartbeat renewed again: the database answers');
      this.failing = false;
    } catch (error) {
      this.renewedSince = null;
      if (!this.failing) {
        this.logger.warn(
          `Heartbeat not renewed (${(error as Error).message}); other workers' leases are not judged ` +
            'until it is',
        );
      }
      this.failing = true;
    }
  }
}
