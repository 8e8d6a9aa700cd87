import type { ObjectId } from 'mongodb';

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

/** A held job as the reaper or a shutdown release sees it. */
export interface HeldJob {
  _id: ObjectId;
  attempts: number;
  lockToken: string;
  /** When the holder marked it handed to the outside world (a message given to the transport). */
  handedAt?: Date;
  /** Set with `handedAt` when what it was handed to drops a repeat (an idempotent API): safe to run again. */
  handedRepeatable?: boolean;
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
 * One kind of background work on the lease-queue engine: its collection's field names and statuses, what
 * a scan reads, and its rules for outcomes and lapsed leases. The collection and its indexes stay the
 * kind's (see each kind's schema).
 */
export interface QueueKind<Due extends DueJob, Outcome> {
  /** Names the kind in logs and handler checks (`email`, `chat`). */
  name: string;
  /** The job types this kind runs; each needs a `@JobHandler` (checked at boot). */
  types: readonly string[];
  /** The job's type (kinds with one type answer it without reading the job). */
  typeOf(job: Record<string, unknown>): string;
  /** Set on a job's type field: the reaper reads lapsed jobs per type (the kind's index has the field). */
  typeField?: string;
  /** The due-time field (`scheduledAt`, `nextAttemptAt`). */
  dueField: string;
  claimableStatuses: readonly string[];
  /** The scan's order and what it reads of each due job. */
  dueSort: Record<string, 1 | -1>;
  dueProjection: Record<string, 1>;
  dueJobOf(doc: Record<string, unknown>): Due;
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
