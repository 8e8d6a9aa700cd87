import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectKind, type KindRuntime } from '../../queue/kind-runtime';
import { PollingWorker, type RunSummary } from '../../queue/polling-worker';
import type { HeldJob, LapseRule } from '../../queue/queue-kind';
import { EmailEvents, type CampaignJobsFinishedEvent } from '../email.events';
import { sentMessageOf } from '../events/sent-events';
import { SuppressionService } from '../suppression/suppression.service';
import { ledgerMessageOf } from './message-ledger';
import { EmailJobStore, type FinishedJob, type JobOutcome, summarizeReaped } from './email-job.store';
import { type DueJob, EMAIL_KIND, type EmailKindTypes, type EmailRecord, type EmailScan } from './email-kind';
import type { EmailJob } from './schemas/email-job.schema';

export type WorkerRunSummary = RunSummary<JobOutcome['status']>;

/**
 * Sends what is due in the `email_jobs` queue, on the engine's polling worker (src/queue/): every
 * `EMAIL_WORKER_INTERVAL_MS` a run scans due jobs (for up to `rescanAfterMs`), checks a scanned batch's
 * addresses against the suppression list before claiming it, claims `concurrency` jobs per round trip and
 * records outcomes `finishBatchSize` at a time. The handlers are `@JobHandler(EMAIL_KIND, 'email.send')`
 * (SendEmailHandler) and `@JobHandler(EMAIL_KIND, 'email.batch.plan')` (BatchPlanHandler); the settings are
 * the kind's (`EMAIL_KIND.settings`).
 */
@Injectable()
export class EmailWorker extends PollingWorker<EmailKindTypes> {
  /** Campaigns with a final outcome during the current run (hinted once more when it ends). */
  private readonly touched = new Set<string>();

  constructor(
    @InjectKind(EMAIL_KIND) runtime: KindRuntime<EmailKindTypes>,
    private readonly jobs: EmailJobStore,
    private readonly suppression: SuppressionService,
    private readonly events: EventEmitter2,
  ) {
    super(runtime, jobs);
  }

  /** Whether the jobs queued before streams existed have been given theirs (`backfillStreams`). */
  private streamsGiven = false;

  /**
   * Before the first run: the jobs queued before streams existed get theirs (neither lane scans a job
   * without one). Tried again at each run until it succeeds, so a database away at start-up delays it
   * and never stops the process from starting.
   */
  override async processDue(): Promise<WorkerRunSummary> {
    if (!this.streamsGiven) {
      try {
        const given = await this.jobs.backfillStreams();
        this.streamsGiven = true;
        if (given > 0) this.logger.log(`${given} job(s) queued before streams were given their stream`);
      } catch (error) {
        this.logger.warn(
          `Jobs queued before streams not given theirs yet, tried again next run: ${(error as Error).message}`,
        );
      }
    }
    return super.processDue();
  }

  /** The run API the rest of the app and the tests know (the engine's `processDue`). */
  processDueJobs(): Promise<WorkerRunSummary> {
    return this.processDue();
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

  protected override recordOf(job: EmailJob): EmailRecord {
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
