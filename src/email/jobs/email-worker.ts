import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { SchedulerRegistry } from '@nestjs/schedule';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../../config/env';
import { EmailEvents, type CampaignJobsFinishedEvent } from '../email.events';
import { SentEvents, sentMessageOf } from '../events/sent-events';
import type { SuppressionReason } from '../suppression/schemas/suppression.schema';
import { SuppressionService } from '../suppression/suppression.service';
import type { BatchPlan } from './batch-plan';
import { retryDelayMs } from './backoff';
import { BatchPlanners } from './batch-planners';
import {
  type DueJob,
  type DueScan,
  EmailJobStore,
  type FinishedJob,
  type JobOutcome,
} from './email-job.store';
import { RateLimiter } from './rate-limiter';
import type { EmailJob } from './schemas/email-job.schema';
import { isPermanentFailure, SendEmailHandler, type TemplateMemo } from './send-email.handler';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from './worker-options';

export interface WorkerRunSummary {
  completed: number;
  failed: number;
  dead: number;
  /** Jobs another worker claimed first. */
  lostRaces: number;
  reaped: number;
}

const INTERVAL_NAME = 'email-worker';
const REAP_EVERY_MS = 60_000;

/**
 * Sends what is due in the `email_jobs` queue. Every `EMAIL_WORKER_INTERVAL_MS` a run starts: it reaps lapsed
 * leases (again every minute while it lasts), scans up to `scanSize` due jobs, and works through them with
 * `concurrency` slots. The slots take jobs from a feed that claims the next `concurrency` scanned jobs in one
 * `bulkWrite` by their unique claim keys (whoever removes a key owns that job, so several workers never take
 * the same one) and gives each claim its own lock token. A slot sends its job and hands the outcome to a
 * buffer written with one `bulkWrite` per `finishBatchSize`, each update guarded by the claim's token. The
 * run scans again while jobs are due and this worker still wins some of them.
 */
@Injectable()
export class EmailWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(EmailWorker.name);
  private readonly rate: RateLimiter;
  private run: Promise<WorkerRunSummary> | null = null;
  private stopping = false;
  /** When this process's last run ended (reported by `/health`); null before the first. */
  private lastRunEndedAt: Date | null = null;

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly store: EmailJobStore,
    private readonly suppression: SuppressionService,
    private readonly sender: SendEmailHandler,
    private readonly planners: BatchPlanners,
    private readonly scheduler: SchedulerRegistry,
    private readonly events: EventEmitter2,
    private readonly sentEvents: SentEvents,
    @Inject(EMAIL_WORKER_OPTIONS) private readonly options: EmailWorkerOptions,
  ) {
    this.rate = new RateLimiter(options.ratePerSecond);
  }

  onApplicationBootstrap(): void {
    if (!this.config.get('EMAIL_WORKER_ENABLED', { infer: true })) return;
    const interval = this.config.get('EMAIL_WORKER_INTERVAL_MS', { infer: true });
    const timer = setInterval(() => this.tick(), interval);
    this.scheduler.addInterval(INTERVAL_NAME, timer);
    this.logger.log(
      `E-mail worker polling every ${interval} ms (concurrency ${this.options.concurrency}, ` +
        `rate ${this.options.ratePerSecond || 'unlimited'}/s)`,
    );
  }

  /** Shutdown waits for the messages in flight and records their outcomes; unclaimed jobs stay due. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) this.scheduler.deleteInterval(INTERVAL_NAME);
    await this.run?.catch(() => undefined);
  }

  get lastRunAt(): Date | null {
    return this.lastRunEndedAt;
  }

  private tick(): void {
    if (this.run || this.stopping) return;
    this.processDueJobs().catch((error: unknown) => {
      this.logger.error(`E-mail worker run failed: ${(error as Error).message}`, (error as Error).stack);
    });
  }

  /**
   * Works until nothing is due (or shutdown begins). A call while a run is in progress joins that run, so
   * one process never runs two at once and shutdown can wait for it.
   */
  processDueJobs(): Promise<WorkerRunSummary> {
    this.run ??= this.runOnce().finally(() => {
      this.run = null;
      this.lastRunEndedAt = new Date();
    });
    return this.run;
  }

  private async runOnce(): Promise<WorkerRunSummary> {
    const summary = emptySummary();
    const touched = new Set<string>();
    try {
      await this.workUntilIdle(summary, touched);
    } finally {
      this.campaignJobsFinished([...touched], true);
    }
    return summary;
  }

  private async workUntilIdle(summary: WorkerRunSummary, touched: Set<string>): Promise<void> {
    let reapedAt = 0;
    while (!this.stopping) {
      // A busy queue keeps one run going for long: lapsed leases are reaped at its start and every minute.
      if (Date.now() - reapedAt >= REAP_EVERY_MS) {
        await this.reap(summary);
        reapedAt = Date.now();
      }
      const scan = this.store.scanDue(this.options.scanSize);
      let claimed: number;
      try {
        claimed = await this.work(scan, summary, touched);
      } finally {
        await scan.close();
      }
      // Nothing was due, or every job of the scan went to other workers: leave the rest to the next tick
      // instead of spinning.
      if (claimed === 0) break;
    }
  }

  private async reap(summary: WorkerRunSummary): Promise<void> {
    const reaped = await this.store.reapLapsedLeases();
    summary.reaped += reaped.dead + reaped.requeued;
    this.campaignJobsFinished([...reaped.campaignIds]);
    if (reaped.dead > 0) {
      this.logger.warn(`${reaped.dead} e-mail job(s) whose worker stopped mid-delivery were marked dead`);
    }
  }

  /**
   * Works through one scan, batch by batch, until it is exhausted or `rescanAfterMs` old (a job that fell
   * due since, say a transactional mail ahead of a campaign, waits for the next scan); returns how many
   * jobs this worker claimed.
   */
  private async work(scan: DueScan, summary: WorkerRunSummary, touched: Set<string>): Promise<number> {
    const scanToken = randomBytes(12).toString('hex');
    const freshUntil = Date.now() + this.options.rescanAfterMs;
    const suppressed = new Map<string, SuppressionReason>();
    const nextDue = async () => {
      const due = await scan.next();
      const reasons = await this.suppression.reasonsFor(due.flatMap((job) => (job.to ? [job.to] : [])));
      for (const [address, reason] of reasons) suppressed.set(address, reason);
      return spreadWithinPriority(due);
    };
    const memo: TemplateMemo = new Map();
    const finished = new FinishBuffer(
      this.store,
      this.options.finishBatchSize,
      summary,
      this.logger,
      (campaignIds) => {
        for (const id of campaignIds) touched.add(id);
        this.campaignJobsFinished(campaignIds);
      },
      this.sentEvents,
    );
    let claimed = 0;
    const feed = new ClaimFeed(
      nextDue,
      () => Date.now() >= freshUntil,
      this.options.concurrency,
      async (batch) => {
        const jobs = await this.store.claimMany(
          batch,
          (job) => `${scanToken}.${String(job._id)}`,
          this.options.leaseMs,
        );
        summary.lostRaces += batch.length - jobs.length;
        claimed += jobs.length;
        return jobs;
      },
    );
    const slot = async () => {
      for (let next = await feed.next(this.stopping); next; next = await feed.next(this.stopping)) {
        const { job, lockToken } = next;
        await this.rate.acquire();
        const to = (job.payload as { to?: string }).to?.toLowerCase() ?? '';
        const outcome = await this.attempt(job, suppressed.get(to), memo);
        await finished.add({
          id: job._id,
          attempts: job.attempts,
          lockToken,
          outcome,
          campaignId: job.campaignId,
          message: sentMessageOf(job),
        });
      }
    };
    // Every slot settles before the run ends, even when one fails (say, the outcome write): a run that
    // returned early would leave sends going that shutdown no longer waits for.
    const slots = await Promise.allSettled(Array.from({ length: this.options.concurrency }, slot));
    await finished.flush();
    const failure = slots.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    return claimed;
  }

  private async attempt(
    job: EmailJob,
    suppressedBecause: Parameters<SendEmailHandler['send']>[1],
    memo: TemplateMemo,
  ): Promise<JobOutcome> {
    try {
      if (job.type === 'email.batch.plan') return await this.plan(job);
      const sent = await this.sender.send(job, suppressedBecause, memo);
      return sent.sent
        ? { status: 'completed', result: sent.result, messageId: sent.messageId }
        : { status: 'completed', result: sent.result };
    } catch (error) {
      return this.failure(job, error);
    }
  }

  private async plan(job: EmailJob): Promise<JobOutcome> {
    const plan = job.payload as BatchPlan;
    const planner = this.planners.get(plan.kind);
    if (!planner) return { status: 'dead', error: `No batch planner for kind "${plan.kind}"` };
    return { status: 'completed', result: { ...(await planner(plan, String(job._id))) } };
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

  private failure(job: EmailJob, error: unknown): JobOutcome {
    const message = error instanceof Error ? error.message : String(error);
    if (isPermanentFailure(error) || job.attempts >= job.maxAttempts) {
      this.logger.warn(`E-mail job ${String(job._id)} is dead after ${job.attempts} attempt(s): ${message}`);
      return { status: 'dead', error: message };
    }
    const retryAt = new Date(Date.now() + retryDelayMs(job.attempts, this.options.backoff));
    return { status: 'failed', error: message, retryAt };
  }
}

type Claimed = { job: EmailJob; lockToken: string };

/**
 * Hands claimed jobs to the worker's slots, claiming `batchSize` scanned jobs in one go (one claim round
 * trip per batch instead of one per message). The next batch is claimed while the slots still have half a
 * batch to start, so they do not stand idle during the round trip; this worker holds at most two batches
 * beyond the messages in flight. Scanned jobs come from `nextDue` (a batch of the scan at a time, empty
 * once it is exhausted); once the scan is `stale` (checked after its first claim), the rest of it is left
 * for the next scan. Once shutdown begins it claims no more and hands out only what is claimed (a claim in
 * flight included): those jobs are this worker's and are sent, not left to lapse.
 */
class ClaimFeed {
  private due: DueJob[] = [];
  private scanEnded = false;
  private refills = 0;
  private claimed: Claimed[] = [];
  private refill: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;

  constructor(
    private readonly nextDue: () => Promise<DueJob[]>,
    private readonly stale: () => boolean,
    private readonly batchSize: number,
    private readonly claim: (batch: DueJob[]) => Promise<Claimed[]>,
  ) {}

  async next(stopping: boolean): Promise<Claimed | undefined> {
    for (;;) {
      if (this.claimed.length > 0) break;
      if (this.failure) throw this.failure.error;
      if (this.refill) await this.refill;
      else if (stopping || this.exhausted()) return undefined;
      else this.startRefill();
    }
    const next = this.claimed.shift();
    if (!stopping && this.claimed.length < this.batchSize / 2) this.startRefill();
    return next;
  }

  /** True once the scan has no more jobs for this feed: read to its end, or stale after a first claim. */
  private exhausted(): boolean {
    if (this.refills > 0 && !this.scanEnded && this.stale()) {
      // The rest of the scan is left to the next one, which sees what fell due since.
      this.scanEnded = true;
      this.due = [];
    }
    return this.scanEnded && this.due.length === 0;
  }

  /**
   * A failed scan or claim is kept and thrown to every slot once the jobs already claimed are handed out
   * (those are this worker's; left alone they would lapse and end dead unsent). No slot may be waiting when
   * a prefetch fails, hence not a rejected promise.
   */
  private startRefill(): void {
    if (this.refill || this.failure || this.exhausted()) return;
    this.refills += 1;
    this.refill = this.takeDue()
      .then((batch) => (batch.length > 0 ? this.claim(batch) : []))
      .then((jobs) => void this.claimed.push(...jobs))
      .catch((error: unknown) => void (this.failure = { error }))
      .finally(() => (this.refill = null));
  }

  /** The next `batchSize` scanned jobs, reading the scan's next batch when those in hand run out. */
  private async takeDue(): Promise<DueJob[]> {
    if (this.due.length < this.batchSize && !this.scanEnded) {
      const more = await this.nextDue();
      if (more.length === 0) this.scanEnded = true;
      this.due.push(...more);
    }
    return this.due.splice(0, this.batchSize);
  }
}

/** Collects outcomes and writes them in batches (one round trip per batch instead of one per message). */
class FinishBuffer {
  private pending: FinishedJob[] = [];

  constructor(
    private readonly store: EmailJobStore,
    private readonly size: number,
    private readonly summary: WorkerRunSummary,
    private readonly logger: Logger,
    private readonly campaignJobsFinished: (campaignIds: string[]) => void,
    private readonly sentEvents: SentEvents,
  ) {}

  async add(job: FinishedJob): Promise<void> {
    this.pending.push(job);
    this.summary[job.outcome.status] += 1;
    if (this.pending.length >= this.size) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const recorded = await this.store.finish(batch);
    if (recorded < batch.length) {
      this.logger.warn(
        `${batch.length - recorded} e-mail job outcome(s) not recorded: the lease had been reaped`,
      );
    }
    // Buffered, not written here: the slots never wait for the events' insert. A message whose lease was
    // reaped meanwhile still left (the SMTP server accepted it), so its `sent` event is true all the same.
    this.sentEvents.record(batch);
    this.campaignJobsFinished(finishedCampaigns(batch));
  }
}

/** Campaigns with a final outcome in the batch (a retry changes none of their figures). */
function finishedCampaigns(batch: FinishedJob[]): string[] {
  const ids = new Set<string>();
  for (const { campaignId, outcome } of batch)
    if (campaignId && outcome.status !== 'failed') ids.add(campaignId);
  return [...ids];
}

function emptySummary(): WorkerRunSummary {
  return { completed: 0, failed: 0, dead: 0, lostRaces: 0, reaped: 0 };
}

/**
 * Workers scanning the same due jobs take them in different orders, so they rarely race for one job; the
 * priority order stays (a shuffle, then a stable sort by priority).
 */
function spreadWithinPriority(jobs: DueJob[]): DueJob[] {
  for (let i = jobs.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
  }
  return jobs.sort((a, b) => b.priority - a.priority);
}
