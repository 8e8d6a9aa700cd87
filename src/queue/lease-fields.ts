import type { Schema } from 'mongoose';

/**
 * The fields the engine writes on a kind's jobs to lease them (docs/queue.md, "The lease protocol"). Only
 * src/queue/ names them: `lease-fields.spec.ts` fails when code elsewhere does.
 */
export const LEASE_FIELDS = [
  'claimKey',
  'lockToken',
  'leaseExpiresAt',
  'workerId',
  'handedAt',
  'handedRepeatable',
] as const;

export interface LeaseFieldsOptions {
  /** The field holds are scoped by (`campaignId`): the index that finds a scope's held jobs. */
  holdScope?: string;
}

/**
 * Adds the lease fields and their indexes to a kind's schema (`schema.plugin(leaseFields, options)`), so no
 * kind declares them again.
 */
export function leaseFields(schema: Schema, options: LeaseFieldsOptions = {}): void {
  schema.add({
    /**
     * `<_id>.<attempts>` while the job may be claimed, absent otherwise: a worker claims by this key alone,
     * and the attempt count in it stops a stale scan from claiming a job claimed and re-scheduled since.
     */
    claimKey: { type: String, select: false },
    /** The holder's token (one per claim): only the holder records the outcome. */
    lockToken: { type: String, select: false },
    leaseExpiresAt: Date,
    /** The holding process (its heartbeat in `queue_workers`): a reaper recovers the job once that lapses. */
    workerId: String,
    /** Marked just before the job left (handed to the outside world): its lapse rule reads it. */
    handedAt: Date,
    handedRepeatable: Boolean,
    /** Held (LeaseQueueStore.hold): not due, and not claimable, until released. */
    heldAt: Date,
  });
  // Claims and outcomes address one job by these keys (equality on a unique index: one lookup, also on the
  // dev database, which scans for any filter that is not exactly an index's fields).
  // Shapes: update eq(claimKey); find eq(lockToken), update eq(lockToken).
  schema.index({ claimKey: 1 }, { unique: true, sparse: true });
  schema.index({ lockToken: 1 }, { unique: true, sparse: true });
  // The reaper: the jobs of holders whose heartbeat lapsed, and those whose lease lapsed (only held jobs
  // carry either field). Shapes: find eq(workerId); find range(leaseExpiresAt).
  schema.index({ workerId: 1 }, { sparse: true });
  schema.index({ leaseExpiresAt: 1 }, { sparse: true });
  if (options.holdScope) {
    // LeaseQueueStore.release: only held jobs are in it, so each round reads the scope's next held ones.
    // Shape: find eq(<scope>) range(heldAt).
    schema.index(
      { [options.holdScope]: 1, heldAt: 1 },
      { partialFilterExpression: { heldAt: { $exists: true } } },
    );
  }
}
