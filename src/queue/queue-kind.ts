import type { ObjectId } from 'mongodb';
import type { RetryPolicy } from './retry-policy';

/** The fields every leased job carries, whatever its kind (the rest is the kind's payload). */
export interface LeasedJob {
  _id: ObjectId | { toString(): string };
  status: string;
  attempts: number;
}

/** A due job as a scan sees it: its next claim key and what the kind reads before claiming. */
export interface DueJob {
  _id: ObjectId;
  claimKey: string;
  priority: number;
}

/**
 * A held job as a lapse rule sees it: whether its holder handed it to the outside world (`yes`), handed it
 * to something that drops a repeat (`repeatable`: an idempotent API, safe to run again), or not (`no`);
 * and the kind's fields the reaper read (`heldProjection`).
 */
export interface HeldJob {
  _id: ObjectId;
  attempts: number;
  handed: 'no' | 'yes' | 'repeatable';
  [field: string]: unknown;
}

/**
 * What becomes of a job whose holder stopped holding it (a lapsed lease, or a release at shutdown):
 * `pending`: never handed, safe to run again (the attempt is not counted when `uncount`);
 * `due`: run again now (a kind whose handlers are safe to repeat); `dead`: ended with `error`;
 * `done`: ended with `set`, its outcome known after all (the kind found what the attempt left behind).
 * A handed job that becomes `due` or `dead` had an unknown outcome: its `unknownOutcomes` counts it.
 */
export type LapseRule =
  | { to: 'pending'; uncount: boolean }
  | { to: 'due'; error: string }
  | { to: 'dead'; error: string }
  | { to: 'done'; set: Record<string, unknown> };

/** A kind's answer for an outcome: the fields to set, and whether the job is due again (a retry). */
export interface OutcomeUpdate {
  set: Record<string, unknown>;
  /** When the job is tried again; absent for an outcome that ends it. */
  retryAt?: Date;
}

/**
 * The status names of a kind's jobs: `pending` (new, or put back unstarted) and `retrying` (due again after
 * a failed attempt) are claimable once due; `held` while a worker holds it; `done` and `dead` end it.
 */
export interface KindStatuses {
  pending: string;
  retrying: string;
  held: string;
  done: string;
  dead: string;
}

/**
 * One kind of background work on the lease-queue engine, declared in one object (docs/queue.md, "Adding a
 * job kind"): its name and job types, its collection's due field and order, its statuses, its retry policy,
 * and its rules for outcomes and lapsed leases. The engine owns the lease fields (`leaseFields`).
 */
export interface QueueKind<Job, Due extends DueJob, Outcome> {
  /** Names the kind in logs and handler checks (`email`, `chat`). */
  name: string;
  /** The job types this kind runs; each needs a `@JobHandler` (checked at boot). */
  types: readonly string[];
  /** The job's type (kinds with one type answer it without reading the job). */
  typeOf(job: Job): string;
  /** The due-time field (`scheduledAt`, `nextAttemptAt`). */
  dueField: string;
  statuses: KindStatuses;
  retry: RetryPolicy<Job>;
  /** The scan's order and what it reads of each due job (the engine adds its claim key). */
  dueSort: Record<string, 1 | -1>;
  dueProjection: Record<string, 1>;
  dueJobOf(doc: Record<string, unknown>): Omit<Due, 'claimKey'>;
  /** Extra fields a claim sets (e.g. `startedAt`). */
  claimFields?(now: Date): Record<string, unknown>;
  outcomeUpdate(outcome: Outcome, now: Date): OutcomeUpdate;
  /** Fields set on every job that ends (retention date, end time). */
  endFields(now: Date): Record<string, unknown>;
  /** What the reaper reads of a lapsed job to apply `lapsed`. */
  heldProjection: Record<string, 1>;
  /** The rule for a job whose holder stopped holding it. */
  lapsed(job: HeldJob): LapseRule;
}

/** The statuses a worker may claim once due. */
export const claimableOf = (statuses: KindStatuses): string[] => [statuses.pending, statuses.retrying];
