import type { ObjectId } from 'mongodb';
import type { Schema } from 'mongoose';
import type { BackoffPolicy } from './backoff';
import type { CircuitSettings } from './circuit';
import type { LeaseFieldsOptions } from './lease-fields';
import type { FailedAttempt } from './retry-policy';

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
 * The types of one kind, named once: `payloads` maps each job type to its payload (what its
 * `@JobHandler` receives, checked at compile time); `job` is the stored document; `outcome` what a handler
 * returns besides a failed attempt; `scan` what the jobs of one scan share; `due` what a scan reads;
 * `record` what the kind's record of an outcome carries for its `recorded` hook.
 */
export interface KindTypes {
  payloads: object;
  job: LeasedJob;
  outcome: { status: string };
  scan?: unknown;
  due?: DueJob;
  record?: object;
}

export type JobTypeOf<T extends KindTypes> = keyof T['payloads'] & string;
/** What a handler of `Type` gets: the job, its payload typed by the kind's map. */
export type JobOf<T extends KindTypes, Type extends JobTypeOf<T> = JobTypeOf<T>> = T['job'] extends {
  payload: unknown;
}
  ? Omit<T['job'], 'payload'> & { payload: T['payloads'][Type] }
  : T['job'] & T['payloads'][Type];
/** A handler's answer: the kind's success, or a failed attempt. */
export type OutcomeOf<T extends KindTypes> = T['outcome'] | FailedAttempt;
export type DueOf<T extends KindTypes> = T['due'] extends DueJob ? T['due'] : DueJob;
export type ScanOf<T extends KindTypes> = T['scan'];

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
 * How a kind's worker runs: read from its feature's settings (`env`), over `defaults`, then the options
 * object a test may replace or change between runs (`token`). Read at the start of every run.
 */
export interface KindSettings {
  /** Whether this process polls (and reaps) on timers; a run may still be started by hand. */
  enabled: boolean;
  intervalMs: number;
  /** Jobs in flight at once (the slots); also how many one claim round trip takes. */
  concurrency: number;
  /** Jobs started per second across the slots; 0 = no limit. */
  ratePerSecond: number;
  /** How long a claimed job stays this worker's; a lapsed lease is reaped by any worker. */
  leaseMs: number;
  /** Due jobs read per batch of a scan. */
  scanSize: number;
  /** How long a run works through one scan before it scans again (what fell due since waits that long). */
  rescanAfterMs: number;
  /** Outcomes recorded per database write. */
  finishBatchSize: number;
  /** How often the reaper's own timer looks for lapsed leases. */
  reapEveryMs: number;
  /** Attempts before a job is dead (a job may carry its own: `retry.maxAttempts`). */
  maxAttempts: number;
  /** Read at each failure, so changed settings apply at once. */
  backoff: BackoffPolicy;
  /** Days an ended job is kept (for `endFields`); 0 = kept. */
  retentionDays: number;
  /** Probe waits while a dependency is unavailable (default: 1 s doubling up to 30 s). */
  circuit?: CircuitSettings;
}

/** A lane's own slots and rate budget (`concurrency`, `ratePerSecond`), over the kind's. */
export type LaneSettings = Partial<Pick<KindSettings, 'concurrency' | 'ratePerSecond'>>;

/** The configuration variable each setting is read from (`docs/development.md`, "Adding a setting"). */
export type SettingsEnv = Partial<Record<keyof KindSettings, string>> & {
  /** Per lane: the variables of its own slots and rate budget. */
  lanes?: Record<string, Partial<Record<keyof LaneSettings, string>>>;
};

/**
 * One kind of background work on the lease-queue engine, declared in one object (docs/queue.md, "Adding a
 * job kind") and registered with `QueueModule.forKind`: its collection, job types, due field and order,
 * statuses, retry rule, outcome and lapse rules, lanes and settings. The engine owns the lease fields, the
 * store, the worker and the handler check.
 */
export interface QueueKind<T extends KindTypes> {
  /** Names the kind in logs, handler checks and injection tokens (`email`, `chat`). */
  name: string;
  /** The kind's collection: the engine adds its lease fields (`leaseFields`) and registers the model. */
  model: { name: string; schema: Schema; lease?: LeaseFieldsOptions };
  /** The job types this kind runs (the keys of its payload map); each needs a `@JobHandler`. */
  jobTypes: readonly JobTypeOf<T>[];
  /** The job's type (default: its `type` field). */
  typeOf?(job: T['job']): JobTypeOf<T>;
  /** The due-time field (`scheduledAt`, `nextAttemptAt`). */
  dueField: string;
  /** The scan's order. */
  order: Record<string, 1 | -1>;
  statuses: KindStatuses;
  retry: {
    /** A job's own attempt limit, when it carries one (default: the `maxAttempts` setting). */
    maxAttempts?(job: T['job']): number | undefined;
    /** Errors besides PermanentJobError that no retry can change (an SMTP 5xx answer). */
    isPermanent?(error: unknown): boolean;
  };
  /** What a scan reads of each due job, and the due job it makes (default: `_id`, priority 0). */
  due?: { projection: Record<string, 1>; of(doc: Record<string, unknown>): Omit<DueOf<T>, 'claimKey'> };
  /**
   * Lanes of one field (`stream`): each value is scanned and worked by a lane of its own, with its own
   * slots and rate budget (`settings.lanes`), so one lane's backlog never waits behind another's.
   */
  lanes?: { field: string; names: readonly string[]; settings?: Record<string, LaneSettings> };
  /** Extra fields a claim sets (e.g. `startedAt`). */
  claimFields?(now: Date): Record<string, unknown>;
  /** The fields a success sets besides its status (default: none). */
  doneFields?(outcome: T['outcome'], now: Date): Record<string, unknown>;
  /** Fields every outcome sets, failures included (where the attempt went). */
  attemptFields?(outcome: OutcomeOf<T>): Record<string, unknown>;
  /** Fields set on every job that ends (default: `expiresAt` after `retentionDays`, when set). */
  endFields?(now: Date, settings: KindSettings): Record<string, unknown>;
  /** What the reaper reads of a lapsed job to apply `lapse`. */
  heldProjection?: Record<string, 1>;
  /** The rule for a job whose holder stopped holding it. */
  lapse(job: HeldJob, settings: KindSettings): LapseRule;
  /** Where the settings come from. */
  settings: {
    env: SettingsEnv;
    defaults: Partial<KindSettings>;
    /** The options object a test may replace (`overrideProvider`) or change between runs. */
    token?: string | symbol;
  };
}

/** Declares a kind (its types named once, `T`); the declaration is checked against them. */
export const defineKind = <T extends KindTypes>(kind: QueueKind<T>): QueueKind<T> => kind;

/** The statuses a worker may claim once due. */
export const claimableOf = (statuses: KindStatuses): string[] => [statuses.pending, statuses.retrying];
