import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../queue/job-handler.decorator';
import { JobHandlers } from '../../queue/job-handlers';
import { EmailService } from '../email.service';
import { type BatchPlanner, PLANNERS, PlanHandler, type PlanOutcome } from './email-handlers';
import { EMAIL_KIND, type EmailKindTypes, type JobOutcome } from './email-kind';
import type { JobOf } from '../../queue/queue-kind';
import { type RecipientsPlan, splitRecipients } from './recipients-plan';
import { PermanentJobError } from '../../queue/retry-policy';

/** Runs `email.batch.plan` jobs with the planner of their kind, and plans the `recipients` kind itself. */
@Injectable()
export class BatchPlanHandler {
  constructor(
    private readonly handlers: JobHandlers,
    private readonly email: EmailService,
  ) {}

  @JobHandler(EMAIL_KIND, 'email.batch.plan')
  async handle(job: JobOf<EmailKindTypes, 'email.batch.plan'>): Promise<JobOutcome> {
    const plan = job.payload;
    const planner = this.handlers.get<BatchPlanner>(PLANNERS, plan.kind);
    if (!planner) throw new PermanentJobError(`No batch planner for kind "${plan.kind}"`);
    return { status: 'completed', result: { ...(await planner(plan, String(job._id))) } };
  }

  /** A list of addresses given by the caller: one message per address and plan, however often it runs. */
  @PlanHandler('recipients')
  async planRecipients(plan: RecipientsPlan, planJobId: string): Promise<PlanOutcome> {
    const { sendable, unsendable } = splitRecipients(plan);
    const keyOf = (to: string) => `plan:${planJobId}:${to.trim().toLowerCase()}`;
    const jobs = await this.email.enqueueEmails(
      sendable.map((recipient) => ({
        message: { ...plan.message, to: recipient.to, variables: recipient.variables },
        // A batch is broadcast mail, whoever it is for.
        options: { idempotencyKey: keyOf(recipient.to), stream: 'broadcast' },
      })),
    );
    const skips = await this.email.recordSkipped(
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
}
