import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../../config/env';
import { JobHandlers } from '../../queue/job-handlers';
import { WorkerHeartbeat } from '../../queue/worker-heartbeat';
import type { Finished } from '../../queue/lease-queue.store';
import { PollingWorker, type RunSummary, type WorkerSettings } from '../../queue/polling-worker';
import type { HeldJob, LapseRule } from '../../queue/queue-kind';
import { EmailEvents, type CampaignJobsFinishedEvent } from '../email.events';
import { sentMessageOf } from '../events/sent-events';
import { SuppressionService } from '../suppression/suppression.service';
import type { EmailScan } from './email-handlers';
import { ledgerMessageOf } from './message-ledger';
import {
  type DueJob,
  EmailJobStore,
  type FinishedJob,
  type JobOutcome,
  summarizeReaped,
} from './email-job.store';
import type { EmailJob } from './schemas/email-job.schema';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from './worker-options';

export type WorkerRunSummary = RunSummary<JobOutcome['status']>;

/**
 * Sends what is due in the `email_jobs` queue, on the engine's polling worker (src/queue/): every
 * `EMAIL_WORKER_INTERVAL_MS` a run scans due jobs (for up to `rescanAfterMs`), checks a scanned batch's
 * addresses against the suppression list before claiming it, claims `concurrency` jobs per round trip and
 * records outcomes `finishBatchSize` at a time. The handlers are `@JobHandler('email.send')`
 * (SendEmailHandler) and `@JobHandler('email.batch.plan')` (BatchPlanHandler).
 */
@Injectable()
export class EmailWorker extends PollingWorker<EmailJob, DueJob, JobOutcome, EmailScan, FinishedJob> {
  /** Campaigns with a final outcome during the current run (hinted once more when it ends). */
  private readonly touched = new Set<string>();

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    store: EmailJobStore,
    handlers: JobHandlers,
    scheduler: SchedulerRegistry,
    heartbeat: WorkerHeartbeat,
    private readonly suppression: SuppressionService,
    private readonly events: EventEmitter2,
    @Inject(EMAIL_WORKER_OPTIONS) private readonly options: EmailWorkerOptions,
  ) {
    super(EmailWorker.name, store, handlers, scheduler, heartbeat);
  }

  /** The run API the rest of the app and the tests know (the engine's `processDue`). */
  processDueJobs(): Promise<WorkerRunSummary> {
    return this.processDue();
  }

  protected settings(): WorkerSettings {
    return {
      ...this.options,
      enabled: this.config.get('EMAIL_WORKER_ENABLED', { infer: true }),
      intervalMs: this.config.get('EMAIL_WORKER_INTERVAL_MS', { infer: true }),
      shutdownMs: this.config.get('WORKER_SHUTDOWN_MS', { infer: true }),
      reapEveryMs: this.options.reapEveryMs ?? 5_000,
    };
  }

  protected override newScan(): EmailScan {
    return { suppressed: new Map(), memo: new Map() };
  }

  /** Suppressed addresses are read once per scanned batch, before the claim; then spread within priority. */
  protected override async prepareDue(due: DueJob[], scan: EmailScan): Promise<DueJob[]> {
    const causes = await this.suppression.causesFor(due.flatMap((job) => (job.to ? [job.to] : [])));
    for (const [address, found] of causes) scan.suppressed.set(address, found);
    return super.prepareDue(due, scan);
  }

  protected override recordOf(job: EmailJob): Omit<FinishedJob, keyof Finished<JobOutcome>> {
    return {
      campaignId: job.campaignId,
      message: sentMessageOf(job),
      resentAfterUnknown: (job.unknownOutcomes ?? 0) > 0,
      ...(job.type === 'email.send' ? { ledger: ledgerMessageOf(job) } : {}),
    };
  }

  protected override recorded(batch: FinishedJob[]): void {
    // The `sent` events were written with the outcomes (EmailJobStore.finish).
    const campaignIds = finishedCampaigns(batch);
    for (const id of campaignIds) this.touched.add(id);
    this.campaignJobsFinished(campaignIds);
  }

  protected override reaped(reaped: { job: HeldJob; rule: LapseRule }[]): void {
    const { dead, done, campaignIds } = summarizeReaped(reaped);
    this.campaignJobsFinished([...campaignIds]);
    if (dead > 0)
      this.logger.warn(`${dead} e-mail job(s) whose worker stopped mid-delivery were marked dead`);
    if (done > 0) {
      this.logger.log(
        `${done} e-mail job(s) whose worker stopped before recording the outcome were found sent ` +
          '(their sent event was written): completed',
      );
    }
  }

  protected override runEnded(): void {
    const campaignIds = [...this.touched];
    this.touched.clear();
    this.campaignJobsFinished(campaignIds, true);
  }

  /**
   * Hints to the campaigns' owner (newsletters) that it may recount them from the queue. Not awaited, and a
   * listener's failure is logged, not thrown: the outcomes are recorded on the jobs already, the owner's
   * periodic sweep repairs a lost hint, and the queue must keep moving.
   */
  private campaignJobsFinished(campaignIds: string[], drained = false): void {
    if (campaignIds.length === 0) return;
    try {
      this.events.emit(EmailEvents.CampaignJobsFinished, {
        campaignIds,
        drained,
      } satisfies CampaignJobsFinishedEvent);
    } catch (error) {
      this.logger.error(`Campaigns ${campaignIds.join(', ')}: hint failed: ${(error as Error).message}`);
    }
  }
}

/** Campaigns with a final outcome in the batch (a retry changes none of their figures). */
function finishedCampaigns(batch: FinishedJob[]): string[] {
  const ids = new Set<string>();
  for (const { campaignId, outcome } of batch)
    if (campaignId && outcome.status !== 'failed') ids.add(campaignId);
  return [...ids];
}
