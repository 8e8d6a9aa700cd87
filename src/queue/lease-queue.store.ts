import type { AnyBulkWriteOperation, Collection, Document, FindCursor, ObjectId } from 'mongodb';
import type { DueJob, HeldJob, LapseRule, QueueKind } from './queue-kind';
import { writeAll } from '../common/database/bulk-writes';
import type { HolderState } from './worker-heartbeat';

/** A held job and the token of the claim that holds it. */
export interface Claimed<Job> {
  job: Job;
  lockToken: string;
}

/** What a worker decided about a job it holds. */
export interface Finished<Outcome> {
  id: ObjectId;
  attempts: number;
  lockToken: string;
  outcome: Outcome;
}

/**
 * A held job put back because what it needs was unavailable (`DependencyUnavailableError`): due again at
 * `until`, its attempt not counted, whether or not it was handed (the attempt reached nobody).
 */
export interface Postponed {
  id: ObjectId;
  attempts: number;
  lockToken: string;
  postponed: { until: Date; error: string };
}

/** The key a claimable job is claimed by, for the attempt that comes next. */
export function claimKeyOf(id: ObjectId | { toString(): string }, attempts: number): string {
  return `${String(id)}.${attempts}`;
}

/** Fields only a held job carries: gone once its holder finishes, releases it or is reaped. */
const HOLD_FIELDS = {
  lockToken: '',
  workerId: '',
  leaseExpiresAt: '',
  handedAt: '',
  handedRepeatable: '',
} as const;

/** Tells a reaper whether the holders it names are alive (WorkerHeartbeat.holders). */
export type HolderCheck = (workerIds: string[], now: Date) => Promise<(workerId: string) => HolderState>;

/**
 * The lease protocol over one kind's collection (docs/decisions/queue-lease-queue-engine.md). A job that may
 * be claimed carries `claimKey` = `<_id>.<attempts>`; a claim removes it in the same update that sets the
 * holder's `lockToken` and lease, so of several workers racing for one job exactly one wins, and a stale scan
 * (the job claimed and re-scheduled since) takes nothing. Every later write names the holder's token, so a
 * holder whose lease was reaped cannot overwrite what happened since. The hot path uses the driver: the
 * filters are built here, never from input, and each step is one round trip for a whole batch (each update is
 * a single lookup in a unique index).
 */
export class LeaseQueueStore<Job, Due extends DueJob, Outcome> {
  constructor(
    private readonly collectionOf: () => Collection,
    readonly kind: QueueKind<Due, Outcome>,
  ) {}

  protected get collection(): Collection {
    return this.collectionOf();
  }

  /**
   * Due jobs in the kind's order, read in batches of `batchSize` from one cursor for as long as the worker
   * wants more (close the scan when done). The dev database filters and sorts the whole collection for
   * every such query, whatever its limit, so a worker reads one scan while it stays fresh.
   */
  scanDue(batchSize: number, now = new Date()): DueScan<Due> {
    const filter = {
      status: { $in: [...this.kind.claimableStatuses] },
      [this.kind.dueField]: { $lte: now },
    };
    const cursor = this.collection.find(filter, {
      projection: this.kind.dueProjection,
      sort: this.kind.dueSort,
      batchSize,
    });
    return new DueScan(cursor, batchSize, (doc) => this.kind.dueJobOf(doc));
  }

  /**
   * Takes scanned jobs in two round trips: one `bulkWrite` of updates by claim key, then one read of the
   * jobs that now carry this claim's tokens. `lockTokenOf` must give a token unique to this claim of that
   * job. A claim counts an attempt; a release of a job never handed takes it back. `workerId` names the
   * claiming process (its heartbeat), so a reaper can tell whether the holder is alive.
   */
  async claimMany(
    due: Due[],
    lockTokenOf: (job: Due) => string,
    leaseMs: number,
    now = new Date(),
    workerId?: string,
  ): Promise<Claimed<Job>[]> {
    if (due.length === 0) return [];
    const tokens = due.map(lockTokenOf);
    await writeAll(
      this.collection,
      due.map((job, i) => ({
        updateOne: {
          filter: { claimKey: job.claimKey },
          update: {
            $set: {
              status: 'processing',
              lockToken: tokens[i],
              ...(workerId ? { workerId } : {}),
              leaseExpiresAt: new Date(now.getTime() + leaseMs),
              ...this.kind.claimFields?.(now),
              updatedAt: now,
            },
            $unset: { claimKey: '', handedAt: '', handedRepeatable: '' },
            $inc: { attempts: 1 },
          },
        },
      })),
    );
    const claimed = await this.collection.find({ lockToken: { $in: tokens } }).toArray();
    return claimed.map((doc) => ({ job: doc as unknown as Job, lockToken: doc.lockToken as string }));
  }

  /**
   * Marks held jobs *handed* (about to leave: a message given to the transport) in one round trip, and
   * returns the tokens still held: a job whose lease was reaped meanwhile may be another worker's now and
   * must not be handed. `repeatable`: what they are handed to drops a repeat (`handedRepeatable`, which the
   * kind's lapse rule reads).
   */
  async markHanded(lockTokens: string[], repeatable = false, now = new Date()): Promise<Set<string>> {
    if (lockTokens.length === 0) return new Set();
    // One update of the whole group (each token is a lookup in its unique index), not one operation per job.
    const result = await this.collection.updateMany(
      { lockToken: { $in: lockTokens } },
      { $set: { handedAt: now, ...(repeatable ? { handedRepeatable: true } : {}) } },
    );
    if (result.matchedCount === lockTokens.length) return new Set(lockTokens);
    const held = await this.collection
      .find({ lockToken: { $in: lockTokens } }, { projection: { lockToken: 1 } })
      .toArray();
    return new Set(held.map((doc) => doc.lockToken as string));
  }

  /**
   * Records the outcomes of held jobs (and puts back postponed ones) in one round trip; returns how many
   * were recorded.
   */
  async finish(finished: (Finished<Outcome> | Postponed)[]): Promise<number> {
    if (finished.length === 0) return 0;
    const now = new Date();
    const operations: AnyBulkWriteOperation[] = finished.map((record) => {
      if ('postponed' in record) return { updateOne: this.postponeUpdate(record, now) };
      const { id, attempts, lockToken, outcome } = record;
      const { set, retryAt } = this.kind.outcomeUpdate(outcome, now);
      const next = retryAt
        ? { status: 'failed', [this.kind.dueField]: retryAt, claimKey: claimKeyOf(id, attempts) }
        : this.kind.endFields(now);
      return {
        updateOne: {
          // The token exists only while this claim holds the job: it is the whole guard.
          filter: { lockToken },
          update: { $set: { ...set, ...next, updatedAt: now }, $unset: HOLD_FIELDS },
        },
      };
    });
    return (await writeAll(this.collection, operations)).modifiedCount;
  }

  /** The status a record's write sets (`failed` for a retry or a postponement). */
  statusAfter(record: Finished<Outcome> | Postponed): string {
    if ('postponed' in record) return 'failed';
    const { set, retryAt } = this.kind.outcomeUpdate(record.outcome, new Date());
    return retryAt ? 'failed' : typeof set.status === 'string' ? set.status : 'completed';
  }

  /** The status of each job now (one lookup by `_id`); a job that is gone is absent. */
  async statusesOf(ids: ObjectId[]): Promise<Map<string, string>> {
    const docs = await this.collection.find({ _id: { $in: ids } }, { projection: { status: 1 } }).toArray();
    return new Map(docs.map((doc) => [String(doc._id), doc.status as string]));
  }

  /**
   * Gives up held jobs (a worker stopping): one never handed goes back to `pending` with its attempt not
   * counted; a handed one follows the kind's rule for a lapsed lease. Returns how many were released.
   */
  async release(held: HeldJob[], now = new Date()): Promise<number> {
    if (held.length === 0) return 0;
    const operations: AnyBulkWriteOperation[] = held.map((job) => ({
      updateOne: {
        filter: { lockToken: job.lockToken },
        update: this.lapseUpdate(
          job,
          job.handedAt ? this.kind.lapsed(job) : { to: 'pending', uncount: true },
          now,
        ),
      },
    }));
    return (await writeAll(this.collection, operations)).modifiedCount;
  }

  /**
   * Jobs whose holder stopped holding them (crash, kill, lost network), each put where the kind's rule says.
   * A job whose holder's heartbeat says it is alive is never taken, however old its lease; one whose
   * holder's heartbeat lapsed is taken at once; one whose holder is unknown (no heartbeat: a claim made by
   * hand, or by a process without one) once its lease has lapsed. The held jobs are few (the workers' slots
   * and claimed batches), so they are read whole and judged here. One update per job, guarded by the
   * holder's token: the caller learns which ones this reaper ended.
   */
  async reapLapsed(now = new Date(), holders?: HolderCheck): Promise<{ job: HeldJob; rule: LapseRule }[]> {
    const held = { status: 'processing' };
    const { typeField } = this.kind;
    const filters = typeField ? this.kind.types.map((type) => ({ ...held, [typeField]: type })) : [held];
    const projection = {
      ...this.kind.heldProjection,
      attempts: 1,
      lockToken: 1,
      workerId: 1,
      leaseExpiresAt: 1,
      handedAt: 1,
      handedRepeatable: 1,
    };
    const jobs: HeldJob[] = [];
    for (const filter of filters) {
      jobs.push(...((await this.collection.find(filter, { projection }).toArray()) as unknown as HeldJob[]));
    }
    const workerIds = jobs.flatMap((job) => (typeof job.workerId === 'string' ? [job.workerId] : []));
    const stateOf = holders && workerIds.length > 0 ? await holders(workerIds, now) : () => 'unknown';
    const lapsed = jobs.filter((job) => {
      const state = typeof job.workerId === 'string' ? stateOf(job.workerId) : 'unknown';
      const leaseLapsed = job.leaseExpiresAt instanceof Date && job.leaseExpiresAt <= now;
      return state === 'dead' || (state === 'unknown' && leaseLapsed);
    });
    const rules = await this.lapseRules(lapsed);
    const reaped: { job: HeldJob; rule: LapseRule }[] = [];
    for (const [i, job] of lapsed.entries()) {
      const result = await this.collection.updateOne(
        { lockToken: job.lockToken },
        this.lapseUpdate(job, rules[i], now),
      );
      if (result.modifiedCount > 0) reaped.push({ job, rule: rules[i] });
    }
    return reaped;
  }

  /** The kind's rule for each lapsed job; a store may read more first (one round trip for all). */
  protected lapseRules(jobs: HeldJob[]): Promise<LapseRule[]> {
    return Promise.resolve(jobs.map((job) => this.kind.lapsed(job)));
  }

  private postponeUpdate({ id, attempts, lockToken, postponed }: Postponed, now: Date) {
    return {
      filter: { lockToken },
      update: {
        $set: {
          status: 'failed',
          lastError: postponed.error,
          [this.kind.dueField]: postponed.until,
          claimKey: claimKeyOf(id, attempts - 1),
          updatedAt: now,
        },
        $unset: HOLD_FIELDS,
        $inc: { attempts: -1 },
      },
    };
  }

  private lapseUpdate(job: HeldJob, rule: LapseRule, now: Date): Document {
    switch (rule.to) {
      case 'pending': {
        const attempts = rule.uncount ? job.attempts - 1 : job.attempts;
        return {
          $set: { status: 'pending', claimKey: claimKeyOf(job._id, attempts), updatedAt: now },
          $unset: HOLD_FIELDS,
          ...(rule.uncount ? { $inc: { attempts: -1 } } : {}),
        };
      }
      case 'due':
        return {
          $set: {
            status: 'failed',
            lastError: rule.error,
            [this.kind.dueField]: now,
            claimKey: claimKeyOf(job._id, job.attempts),
            updatedAt: now,
          },
          $unset: HOLD_FIELDS,
          ...unknownOutcome(job),
        };
      case 'dead':
        return {
          $set: { status: 'dead', lastError: rule.error, ...this.kind.endFields(now), updatedAt: now },
          $unset: HOLD_FIELDS,
          ...unknownOutcome(job),
        };
      case 'done':
        return {
          $set: { ...rule.set, ...this.kind.endFields(now), updatedAt: now },
          $unset: HOLD_FIELDS,
        };
    }
  }
}

/**
 * A handed job given up without its outcome: counted on the job, so its view says it may have left before.
 */
function unknownOutcome(job: HeldJob): Document {
  return job.handedAt ? { $inc: { unknownOutcomes: 1 } } : {};
}

/** Reads a scan of due jobs batch by batch (`LeaseQueueStore.scanDue`). */
export class DueScan<Due> {
  constructor(
    private readonly cursor: FindCursor<Document>,
    private readonly batchSize: number,
    private readonly dueJobOf: (doc: Document) => Due,
  ) {}

  /** The next due jobs (at most the batch size); empty once the scan has no more. */
  async next(): Promise<Due[]> {
    const docs: Document[] = [];
    while (docs.length < this.batchSize && (await this.cursor.hasNext())) {
      docs.push(...this.cursor.readBufferedDocuments(this.batchSize - docs.length));
    }
    return docs.map(this.dueJobOf);
  }

  /** Releases the server's cursor (the rest of the scan is not read). */
  close(): Promise<void> {
    return this.cursor.close();
  }
}
