import type { AnyBulkWriteOperation, Collection, Document, Filter, FindCursor, ObjectId } from 'mongodb';
import {
  claimableOf,
  type DueOf,
  type HeldJob,
  type KindSettings,
  type KindTypes,
  type LapseRule,
  type OutcomeOf,
  type QueueKind,
} from './queue-kind';
import { writeAll } from '../common/database/bulk-writes';
import type { KindRuntime } from './kind-runtime';
import type { FailedAttempt } from './retry-policy';
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

/** What a reaper knows of the holders of leases (WorkerHeartbeat). */
export interface Holders {
  /** The holders whose heartbeat lapsed (none while this process may not judge them). */
  lapsed(now: Date): Promise<string[]>;
  /** Whether each holder named is alive. */
  holders(workerIds: string[], now: Date): Promise<(workerId: string) => HolderState>;
}

/**
 * The claims a live worker knows it holds. A claim the database applied but whose answer was lost (the
 * connection closed, the database died) holds jobs under this worker's id that it never learned of; only
 * the worker itself can tell them from the jobs it is working on, so only its own reaper releases them.
 */
export interface OwnClaims {
  workerId: string;
  holds(lockToken: string): boolean;
}

/** A held job and the token of the claim that holds it, as a release or the reaper gives it up. */
export interface HeldClaim {
  job: HeldJob;
  lockToken: string;
}

/** A job a reaper ended, the rule it applied, and whether it was an orphan of its own process. */
export interface Reaped {
  job: HeldJob;
  rule: LapseRule;
  orphan?: true;
}

/** Held jobs released per write. */
const RELEASE_BATCH = 1_000;
/** Where a held job waits: never due, until it is released. */
export const HELD_UNTIL = new Date('9999-12-31T00:00:00.000Z');

/**
 * The lease protocol over one kind's collection (docs/queue.md). A job that may be claimed
 * carries `claimKey` = `<_id>.<attempts>`; a claim removes it in the same update that sets the holder's
 * `lockToken` and lease, so of several workers racing for one job exactly one wins, and a stale scan
 * (the job claimed and re-scheduled since) takes nothing. Every later write names the holder's token, so a
 * holder whose lease was reaped cannot overwrite what happened since. The hot path uses the driver: the
 * filters are built here, never from input, and each step is one round trip for a whole batch (each update is
 * a single lookup in a unique index).
 */
export class LeaseQueueStore<T extends KindTypes> {
  readonly kind: QueueKind<T>;

  constructor(private readonly runtime: KindRuntime<T>) {
    this.kind = runtime.kind;
  }

  protected get collection(): Collection {
    return this.runtime.collection();
  }

  /** The fields a new job is inserted with to be claimable once its due field has passed. */
  newJobFields(id: ObjectId): Record<string, unknown> {
    return { status: this.kind.statuses.pending, attempts: 0, claimKey: claimKeyOf(id, 0) };
  }

  /**
   * Tells this process's worker which lanes the inserted `jobs` made work for (those claimable and due by
   * `now`): it runs them at once rather than at its next poll. Call it once the insert is acknowledged.
   */
  announceAdded(jobs: Record<string, unknown>[], now: Date): void {
    const laneField = this.kind.lanes?.field;
    const lanes = new Set<string>();
    for (const job of jobs) {
      const due = job[this.kind.dueField];
      if (!job.claimKey || (due instanceof Date && due > now)) continue;
      lanes.add(laneField ? String(job[laneField]) : '');
    }
    if (lanes.size > 0) this.runtime.jobsAdded.announce(lanes);
  }

  /** The fields of a job that ends (its status set apart): the kind's, by default its expiry date. */
  endFields(now: Date): Record<string, unknown> {
    return endFieldsOf(this.kind, now, this.runtime.settings());
  }

  /** The fields an outcome sets, and when the job is due again (a failed attempt that will be retried). */
  outcomeUpdate(outcome: OutcomeOf<T>, now: Date): { set: Record<string, unknown>; retryAt?: Date } {
    const { statuses } = this.kind;
    const where = this.kind.attemptFields?.(outcome) ?? {};
    if (isFailed(outcome)) {
      return outcome.status === 'failed'
        ? { set: { ...where, lastError: outcome.error }, retryAt: outcome.retryAt }
        : { set: { ...where, status: statuses.dead, lastError: outcome.error } };
    }
    const done = outcome;
    return { set: { ...where, ...this.kind.doneFields?.(done, now), status: statuses.done } };
  }

  /**
   * Holds the claimable jobs that match `filter` until `until` (default: until released): they keep their
   * status, lose their claim key (a worker that scanned one before cannot claim it) and are not due. Jobs
   * in flight finish. Returns how many were held.
   */
  async hold(filter: Filter<Document>, until = HELD_UNTIL, now = new Date()): Promise<number> {
    const result = await this.collection.updateMany(
      { ...filter, status: { $in: claimableOf(this.kind.statuses) } },
      { $set: { [this.kind.dueField]: until, heldAt: now, updatedAt: now }, $unset: { claimKey: '' } },
    );
    return result.modifiedCount;
  }

  /** Makes the held jobs that match `filter` due now and claimable again; returns how many. */
  async release(filter: Filter<Document>, now = new Date()): Promise<number> {
    let released = 0;
    for (;;) {
      const held = await this.collection
        .find({ ...filter, heldAt: { $exists: true } }, { projection: { attempts: 1 }, limit: RELEASE_BATCH })
        .toArray();
      if (held.length === 0) return released;
      const operations: AnyBulkWriteOperation[] = held.map((job) => ({
        updateOne: {
          filter: { _id: job._id },
          update: {
            $set: {
              claimKey: claimKeyOf(job._id, job.attempts as number),
              [this.kind.dueField]: now,
              updatedAt: now,
            },
            $unset: { heldAt: '' },
          },
        },
      }));
      released += (await writeAll(this.collection, operations)).modifiedCount;
    }
  }

  /**
   * Ends the claimable jobs that match `filter` as dead with `error`, without their claim key, so a worker
   * that scanned one already cannot claim it. Jobs in flight are not touched. Returns how many ended.
   */
  async cancel(filter: Filter<Document>, error: string, now = new Date()): Promise<number> {
    const result = await this.collection.updateMany(
      { ...filter, status: { $in: claimableOf(this.kind.statuses) } },
      {
        $set: {
          status: this.kind.statuses.dead,
          lastError: error,
          ...this.endFields(now),
          updatedAt: now,
        },
        $unset: { claimKey: '' },
      },
    );
    return result.modifiedCount;
  }

  /**
   * Due jobs in the kind's order, read in batches of `batchSize` from one cursor for as long as the worker
   * wants more (close the scan when done). The dev database filters and sorts the whole collection for
   * every such query, whatever its limit, so a worker reads one scan while it stays fresh.
   */
  scanDue(batchSize: number, now = new Date(), lane?: string): DueScan<DueOf<T>> {
    const filter = {
      status: { $in: claimableOf(this.kind.statuses) },
      ...(lane && this.kind.lanes ? { [this.kind.lanes.field]: lane } : {}),
      [this.kind.dueField]: { $lte: now },
    };
    const due = this.kind.due ?? DEFAULT_DUE;
    const cursor = this.collection.find(filter, {
      projection: { ...due.projection, claimKey: 1 },
      sort: this.kind.order,
      batchSize,
    });
    return new DueScan(cursor, batchSize, (doc) => {
      const claimKey = doc.claimKey as string;
      return { ...due.of(doc), claimKey };
    });
  }

  /**
   * Takes scanned jobs in two round trips: one `bulkWrite` of updates by claim key, then one read of the
   * jobs that now carry this claim's tokens. `lockTokenOf` must give a token unique to this claim of that
   * job. A claim counts an attempt; a release of a job never handed takes it back. `workerId` names the
   * claiming process (its heartbeat), so a reaper can tell whether the holder is alive.
   */
  async claimMany(
    due: DueOf<T>[],
    lockTokenOf: (job: DueOf<T>, index: number) => string,
    leaseMs: number,
    now = new Date(),
    workerId?: string,
  ): Promise<Claimed<T['job']>[]> {
    if (due.length === 0) return [];
    const tokens = due.map(lockTokenOf);
    await writeAll(
      this.collection,
      due.map((job, i) => ({
        updateOne: {
          filter: { claimKey: job.claimKey },
          update: {
            $set: {
              status: this.kind.statuses.held,
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
    // The kind's own documents, as its schema wrote them.
    return claimed.map((doc) => ({ job: doc as T['job'], lockToken: doc.lockToken as string }));
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
  async finish(finished: (Finished<OutcomeOf<T>> | Postponed)[]): Promise<number> {
    if (finished.length === 0) return 0;
    const now = new Date();
    const operations: AnyBulkWriteOperation[] = finished.map((record) => {
      if ('postponed' in record) return { updateOne: this.postponeUpdate(record, now) };
      const { id, attempts, lockToken, outcome } = record;
      const { set, retryAt } = this.outcomeUpdate(outcome, now);
      const next = retryAt
        ? {
            status: this.kind.statuses.retrying,
            [this.kind.dueField]: retryAt,
            claimKey: claimKeyOf(id, attempts),
          }
        : this.endFields(now);
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

  /** The status a record's write sets (`retrying` for a retry or a postponement). */
  statusAfter(record: Finished<OutcomeOf<T>> | Postponed): string {
    const { retrying, done } = this.kind.statuses;
    if ('postponed' in record) return retrying;
    const { set, retryAt } = this.outcomeUpdate(record.outcome, new Date());
    return retryAt ? retrying : typeof set.status === 'string' ? set.status : done;
  }

  /** The status of each job now (one lookup by `_id`); a job that is gone is absent. */
  async statusesOf(ids: ObjectId[]): Promise<Map<string, string>> {
    const docs = await this.collection.find({ _id: { $in: ids } }, { projection: { status: 1 } }).toArray();
    return new Map(docs.map((doc) => [String(doc._id), doc.status as string]));
  }

  /**
   * Gives up held jobs (a worker stopping): one never handed goes back to `pending` with its attempt not
   * counted; a handed one follows the kind's rule for a lapsed lease. Returns how many were given back.
   */
  async giveBack(held: HeldClaim[], now = new Date()): Promise<number> {
    if (held.length === 0) return 0;
    const operations: AnyBulkWriteOperation[] = held.map(({ job, lockToken }) => ({
      updateOne: {
        filter: { lockToken },
        update: this.lapseUpdate(
          job,
          job.handed !== 'no' ? this.lapsed(job) : { to: 'pending', uncount: true },
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
   * hand, or by a process without one) once its lease has lapsed. The reaper's own process (`own`) is the
   * exception to "alive": a lapsed lease under its id that it does not know it holds is an orphan of a claim
   * whose answer was lost, and is taken (never handed, so back to pending with its attempt not counted).
   * Only those jobs are read: the jobs of the lapsed holders (one lookup), and the jobs whose lease lapsed
   * (judged by their holder's heartbeat). One update per job, guarded by the holder's token: the caller
   * learns which ones this reaper ended.
   */
  async reapLapsed(now = new Date(), holders?: Holders, own?: OwnClaims): Promise<Reaped[]> {
    const projection = {
      ...this.kind.heldProjection,
      attempts: 1,
      lockToken: 1,
      workerId: 1,
      handedAt: 1,
      handedRepeatable: 1,
    };
    // A process judges its own leases by what it holds, never by its own heartbeat.
    const dead = (holders ? await holders.lapsed(now) : []).filter((id) => id !== own?.workerId);
    const ofDead =
      dead.length > 0
        ? await this.collection.find({ workerId: { $in: dead } }, { projection }).toArray()
        : [];
    const expired = await this.collection.find({ leaseExpiresAt: { $lte: now } }, { projection }).toArray();
    const workerIds = expired.flatMap((doc) => (typeof doc.workerId === 'string' ? [doc.workerId] : []));
    const stateOf = holders && workerIds.length > 0 ? await holders.holders(workerIds, now) : () => 'unknown';
    const lapsed = new Map<string, HeldClaim & { orphan: boolean }>();
    for (const doc of ofDead) lapsed.set(doc.lockToken as string, { ...heldClaimOf(doc), orphan: false });
    for (const doc of expired) {
      const lockToken = doc.lockToken as string;
      const holder = typeof doc.workerId === 'string' ? doc.workerId : undefined;
      if (own && holder === own.workerId) {
        // Read after the claim was made: a token this worker still holds is in its set by now.
        if (!own.holds(lockToken)) lapsed.set(lockToken, { ...heldClaimOf(doc), orphan: true });
        continue;
      }
      const state = holder ? stateOf(holder) : 'unknown';
      if (state !== 'alive') lapsed.set(lockToken, { ...heldClaimOf(doc), orphan: false });
    }
    const claims = [...lapsed.values()];
    const rules = await this.lapseRules(claims.map(({ job }) => job));
    const reaped: Reaped[] = [];
    for (const [i, { job, lockToken, orphan }] of claims.entries()) {
      // An orphan never handed never started: its attempt is given back, as a release would.
      const rule: LapseRule = orphan && job.handed === 'no' ? { to: 'pending', uncount: true } : rules[i];
      const result = await this.collection.updateOne({ lockToken }, this.lapseUpdate(job, rule, now));
      if (result.modifiedCount > 0) reaped.push({ job, rule, ...(orphan ? { orphan } : {}) });
    }
    return reaped;
  }

  /** The kind's rule for each lapsed job; a store may read more first (one round trip for all). */
  protected lapseRules(jobs: HeldJob[]): Promise<LapseRule[]> {
    return Promise.resolve(jobs.map((job) => this.lapsed(job)));
  }

  /** The kind's rule for a lapsed job, with the settings now. */
  protected lapsed(job: HeldJob): LapseRule {
    return this.kind.lapse(job, this.runtime.settings());
  }

  private postponeUpdate({ id, attempts, lockToken, postponed }: Postponed, now: Date) {
    return {
      filter: { lockToken },
      update: {
        $set: {
          status: this.kind.statuses.retrying,
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
          $set: {
            status: this.kind.statuses.pending,
            claimKey: claimKeyOf(job._id, attempts),
            updatedAt: now,
          },
          $unset: HOLD_FIELDS,
          ...(rule.uncount ? { $inc: { attempts: -1 } } : {}),
        };
      }
      case 'due':
        return {
          $set: {
            status: this.kind.statuses.retrying,
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
          $set: {
            status: this.kind.statuses.dead,
            lastError: rule.error,
            ...this.endFields(now),
            updatedAt: now,
          },
          $unset: HOLD_FIELDS,
          ...unknownOutcome(job),
        };
      case 'done':
        return {
          $set: { ...rule.set, ...this.endFields(now), updatedAt: now },
          $unset: HOLD_FIELDS,
        };
    }
  }
}

const DAY_MS = 86_400_000;

/** What a scan reads of a kind that declares nothing else: the job's id, all of one priority. */
const DEFAULT_DUE = {
  projection: { _id: 1 } as Record<string, 1>,
  of: (doc: Record<string, unknown>) => ({ _id: doc._id as ObjectId, priority: 0 }),
};

/** The fields of a job that ends: the kind's own, or its expiry date after `retentionDays` (0: kept). */
function endFieldsOf<T extends KindTypes>(
  kind: QueueKind<T>,
  now: Date,
  settings: KindSettings,
): Record<string, unknown> {
  if (kind.endFields) return kind.endFields(now, settings);
  return settings.retentionDays > 0
    ? { expiresAt: new Date(now.getTime() + settings.retentionDays * DAY_MS) }
    : {};
}

/** An outcome that is a failed attempt (`failedAttempt`): due again, or dead. */
function isFailed(outcome: { status: string }): outcome is FailedAttempt {
  return outcome.status === 'failed' || outcome.status === 'dead';
}

/**
 * A handed job given up without its outcome: counted on the job, so its view says it may have left before.
 */
function unknownOutcome(job: HeldJob): Document {
  return job.handed !== 'no' ? { $inc: { unknownOutcomes: 1 } } : {};
}

/** A held job as the reaper read it: the handed marks read as `handed`, the token kept apart. */
function heldClaimOf(doc: Document): HeldClaim {
  const { lockToken, workerId: _holder, handedAt, handedRepeatable, ...fields } = doc;
  const handed = !handedAt ? 'no' : handedRepeatable === true ? 'repeatable' : 'yes';
  return { job: { ...(fields as HeldJob), handed }, lockToken: lockToken as string };
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
