import type { JobOf, JobTypeOf, KindTypes, OutcomeOf, ScanOf } from './queue-kind';
import type { FailedAttempt } from './retry-policy';

/** What a handler gets besides its job. */
export interface JobContext<Scan> {
  lockToken: string;
  /**
   * Marks the job handed, just before it leaves (a message given to the transport). After a crash a job
   * never handed is run again; one handed without an outcome follows the kind's lapse rule, which reads
   * `repeatable`: whether what the job was handed to drops a repeat of it (an API that honours
   * idempotency keys), so running it again is safe. Throws when the lease was lost meanwhile: the job must
   * not leave.
   */
  handed(options?: { repeatable?: boolean }): Promise<void>;
  /** State shared by the jobs of one scan (the kind's lookups). */
  scan: Scan;
  /** The kind's retry rule for an attempt that failed with `error` (for a handler that adds fields). */
  fail(error: unknown): FailedAttempt;
}

/** A handler found by `@JobHandler(<kind>, <job type>)`: its job's payload is the kind's for that type. */
export type JobHandlerFn<T extends KindTypes, Type extends JobTypeOf<T> = JobTypeOf<T>> = (
  job: JobOf<T, Type>,
  context: JobContext<ScanOf<T>>,
) => Promise<OutcomeOf<T>>;
