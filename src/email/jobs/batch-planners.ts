import { Injectable } from '@nestjs/common';
import { EmailService } from '../email.service';
import type { BatchPlan } from './batch-plan';
import { type RecipientsPlan, splitRecipients } from './recipients-plan';

export interface PlanOutcome {
  enqueued: number;
  alreadyQueued: number;
  /** Recipients recorded as skipped (`EmailService.recordSkipped`) by this run; absent when none. */
  skipped?: number;
}

/**
 * Expands one batch plan into `email.send` jobs. It must be safe to run again after a crash: derive every
 * message's idempotency key from `planJobId`, so a second run enqueues only what the first did not.
 */
export type BatchPlanner = (plan: BatchPlan, planJobId: string) => Promise<PlanOutcome>;

/** Planners by kind. Modules with their own audiences (newsletters) register theirs at start-up. */
@Injectable()
export class BatchPlanners {
  private readonly planners = new Map<string, BatchPlanner>();

  constructor(email: EmailService) {
    this.register('recipients', (plan, planJobId) =>
      planRecipients(email, plan as RecipientsPlan, planJobId),
    );
  }

  register(kind: string, planner: BatchPlanner): void {
    if (this.planners.has(kind)) throw new Error(`A batch planner for "${kind}" is already registered`);
    this.planners.set(kind, planner);
  }

  get(kind: string): BatchPlanner | undefined {
    return this.planners.get(kind);
  }
}

async function planRecipients(
  email: EmailService,
  plan: RecipientsPlan,
  planJobId: string,
): Promise<PlanOutcome> {
  const { sendable, unsendable } = splitRecipients(plan);
  // One message per address and plan, however often the plan runs.
  const keyOf = (to: string) => `plan:${planJobId}:${to.trim().toLowerCase()}`;
  const jobs = await email.enqueueEmails(
    sendable.map((recipient) => ({
      message: { ...plan.message, to: recipient.to, variables: recipient.variables },
      options: { idempotencyKey: keyOf(recipient.to) },
    })),
  );
  const skips = await email.recordSkipped(
    unsendable.map((to) => ({ message: { ...plan.message, to }, idempotencyKey: keyOf(to) })),
  );
  // An address listed twice maps to one job: count jobs, not list entries.
  const created = new Set(jobs.filter((job) => job.created).map((job) => job.id));
  const all = new Set(jobs.map((job) => job.id));
  const skipped = new Set(skips.map((job) => job.id)).size;
  return {
    enqueued: created.size,
    alreadyQueued: all.size - created.size,
    ...(skipped > 0 ? { skipped } : {}),
  };
}
