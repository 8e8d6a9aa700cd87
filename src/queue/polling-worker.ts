import {
  type BeforeApplicationShutdown,
  Inject,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { randomBytes } from 'node:crypto';
import { DatabaseAvailability } from '../database/database-availability';
import { ClaimFeed } from './claim-feed';
import { DatabasePause } from './database-pause';
import { Circuit, type CircuitSettings, DEFAULT_CIRCUIT, DependencyUnavailableError } from './circuit';
import { FinishBuffer } from './finish-buffer';
import { HandedMarks } from './handed-marks';
import type { JobHandlers } from './job-handlers';
import type { DueScan, Finished, HeldClaim, LeaseQueueStore, Postponed } from './lease-queue.store';
import type { DueJob, HeldJob, LapseRule, LeasedJob } from './queue-kind';
import { RateLimiter } from './rate-limiter';
import { type FailedAttempt, failedAttempt } from './retry-policy';
import type { WorkerHeartbeat } from './worker-heartbeat';

/** How a worker runs; read at the start of every run, so a test may change them between runs. */
export interface WorkerSettings {
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
  /** How long a stop may take (`WORKER_SHUTDOWN_MS`). */
  shutdownMs: number;
  /** Probe waits while a dependency is unavailable (default: 1 s doubling up to 30 s). */
  circuit?: CircuitSettings;
}

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
}

/** A handler found by `@JobHandler(<job type>)`. */
export type JobHandlerFn<Job, Scan, Outcome> = (job: Job, context: JobContext<Scan>) => Promise<Outcome>;

export type RunSummary<Status extends string> = Record<Status, number> & {
  lostRaces: number;
  reaped: number;
  /** Jobs put back, attempt not counted, because a dependency was unavailable. */
  postponed: number;
};

/** The lease was reaped before the job left: another worker may hold it now. */
export class LeaseLostError extends Error {
  constructor() {
    super('The lease was lost before the job was handed; not sent');
  }
}

/** The handed mark could not be written (the database is away): the job did not leave, it goes back. */
class MarkNotWrittenError extends Error {
  constructor(cause: unknown) {
    super(`The handed mark was not written (${(cause as Error).message}); not sent, put back`);
  }
}

/**
 * The polling-worker base of the lease-queue engine (docs/queue.md). Every `intervalMs` a run
 * scans due jobs and works through them with `concurrency` slots: a feed claims the next `concurrency`
 * scanned jobs in one round trip, each slot waits for the rate limiter, runs the job's `@JobHandler` and
 * hands its outcome to a buffer written in batches (retried, never dropped). A run scans again while jobs
 * are due and this worker still wins some. Lapsed leases are reaped at the start of a run and by a timer of
 * their own, so a busy or stuck run does not stop reaping. A stop is bounded by `shutdownMs`: claimed jobs
 * not started are released at once, jobs in flight finish or are released at the limit. A handler that
 * throws `DependencyUnavailableError` opens the worker's circuit: its job is put back with the attempt not
 * counted, the worker claims nothing more, then probes with one job at a time until the dependency answers.
 */
export abstract class PollingWorker<
  Job extends LeasedJob,
  Due extends DueJob,
  Outcome extends { status: string },
  Scan = undefined,
  F extends Finished<Outcome> = Finished<Outcome>,
>
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  protected readonly logger: Logger;
  private run: Promise<RunSummary<Outcome['status']>> | null = null;
  private stopping = false;
  private signalStop: () => void = noop;
  /** Settles when a stop begins (ends the slots' waits for the rate limiter). */
  private readonly stopped = new Promise<void>((resolve) => (this.signalStop = resolve));
  private lastRunEndedAt: Date | null = null;
  private rate: RateLimiter | null = null;
  private reaping: Promise<{ job: HeldJob; rule: LapseRule }[]> | null = null;
  /** Jobs this worker holds and has started, by lock token (released when a stop reaches its limit). */
  private readonly held = new Map<string, HeldEntry<Job>>();
  private finishing: FinishBuffer<Outcome, F> | null = null;
  private readonly marks: HandedMarks;
  private readonly circuit: Circuit;
  /** Injected as a property, so the kinds' constructors need not pass it on. */
  @Inject(DatabaseAvailability) private readonly availability!: DatabaseAvailability;
  private pause?: DatabasePause;
  private heartbeatStarted = false;
  /** Runs (or reaps) failing in a row: the first failure of a streak is logged, and the recovery. */
  private readonly failures = { run: 0, reap: 0 };

  protected constructor(
    private readonly name: string,
    protected readonly store: LeaseQueueStore<Job, Due, Outcome>,
    private readonly handlers: JobHandlers,
    private readonly scheduler: SchedulerRegistry,
    private readonly heartbeat: WorkerHeartbeat,
  ) {
    this.logger = new Logger(name);
    this.marks = new HandedMarks((tokens, repeatable) => store.markHanded(tokens, repeatable));
    this.circuit = new Circuit(() => this.settings().circuit ?? DEFAULT_CIRCUIT, this.logger);
  }

  protected abstract settings(): WorkerSettings;

  /** The outcome of an attempt that threw: the kind's retry policy (`failedAttempt`). */
  protected failure(job: Job, error: unknown): Outcome {
    const failed = failedAttempt(this.store.kind.retry, job, error);
    if (failed.status === 'dead') {
      this.logger.warn(
        `${this.store.kind.name} job ${String(job._id)} is dead after ${job.attempts} attempt(s): ` +
          failed.error,
      );
    }
    // A kind's outcomes include the two of a failed attempt (checked where the kind is declared).
    return failed as FailedAttempt & Outcome;
  }

  /** Fresh state for the jobs of one scan. */
  protected newScan(): Scan {
    return undefined as Scan;
  }

  /**
   * Scanned jobs before they are claimed (a kind may read what it needs); by default spread within priority.
   */
  protected prepareDue(due: Due[], _scan: Scan): Promise<Due[]> {
    return Promise.resolve(spreadWithinPriority(due));
  }

  /** What a kind's record of an outcome carries besides the engine's fields, for `recorded`. */
  protected recordOf(_job: Job, _outcome: Outcome): Omit<F, keyof Finished<Outcome>> {
    return {} as Omit<F, keyof Finished<Outcome>>;
  }

  private finished(job: Job, lockToken: string, outcome: Outcome): F {
    const id = job._id as Finished<Outcome>['id'];
    return { ...this.recordOf(job, outcome), id, attempts: job.attempts, lockToken, outcome } as F;
  }

  /** After a batch of outcomes is written (`recorded` of them were still held). */
  protected recorded(_batch: F[], _recorded: number): void {}

  /** After lapsed leases were reaped. */
  protected reaped(_reaped: { job: HeldJob; rule: LapseRule }[]): void {}

  /** After a run, however it ended. */
  protected runEnded(): void {}

  onModuleInit(): void {
    this.handlers.check(this.store.kind.name, this.store.kind.types);
  }

  onApplicationBootstrap(): void {
    const settings = this.settings();
    if (!settings.enabled) return;
    this.database.watch();
    this.heartbeat.start();
    this.heartbeatStarted = true;
    this.scheduler.addInterval(
      this.name,
      setInterval(() => this.tick(), settings.intervalMs),
    );
    this.scheduler.addInterval(
      `${this.name}.reaper`,
      setInterval(() => {
        if (this.database.paused) return;
        this.reapLapsed().then(
          () => this.succeeded('reap'),
          (error: unknown) => this.failed('reap', error),
        );
      }, settings.reapEveryMs),
    );
    this.logger.log(
      `Polling every ${settings.intervalMs} ms (concurrency ${settings.concurrency}, ` +
        `rate ${settings.ratePerSecond || 'unlimited'}/s)`,
    );
  }

  /**
   * Stops within `shutdownMs`: claims no more, releases what is claimed and not started, waits for the
   * jobs in flight, and at the limit releases those still running (a job never handed goes back to
   * `pending`, its attempt not counted) and writes the outcomes it has.
   */
  async beforeApplicationShutdown(): Promise<void> {
    try {
      await this.stop();
    } finally {
      // After the jobs were given back: the heartbeat ends, so whatever is left is recovered at once.
      if (this.heartbeatStarted) await this.heartbeat.stop();
      this.heartbeatStarted = false;
    }
  }

  private async stop(): Promise<void> {
    this.stopping = true;
    this.signalStop();
    this.database.unwatch();
    for (const name of [this.name, `${this.name}.reaper`]) {
      if (this.scheduler.doesExist('interval', name)) this.scheduler.deleteInterval(name);
    }
    const run = this.run;
    if (!run) return;
    const limitMs = this.settings().shutdownMs;
    const deadline = Date.now() + limitMs;
    // Most of the time for the work in flight; the rest to release what is still running and record outcomes.
    const reserveMs = Math.min(2_000, limitMs / 4);
    if (await within(run.then(noop, noop), limitMs - reserveMs)) return;
    const stuck = [...this.held.values()];
    this.held.clear();
    if (this.finishing) this.finishing.giveUpAt = deadline;
    this.logger.warn(`Stopping with ${stuck.length} job(s) still running: released`);
    await within(this.release(stuck, 'still running at the stop limit'), deadline - Date.now());
    if (this.finishing) await within(this.finishing.flush(), deadline - Date.now());
  }

  /** Claiming pauses while the database is away (created on first use: the availability is a property). */
  private get database(): DatabasePause {
    return (this.pause ??= new DatabasePause(this.availability, this.logger));
  }

  /** When this process's last run ended (reported by `/health`); null before the first. */
  get lastRunAt(): Date | null {
    return this.lastRunEndedAt;
  }

  /**
   * Works until nothing is due (or a stop begins). A call while a run is in progress joins that run, so one
   * process never runs two at once and a stop can wait for it.
   */
  processDue(): Promise<RunSummary<Outcome['status']>> {
    this.run ??= this.runOnce().finally(() => {
      this.run = null;
      this.lastRunEndedAt = new Date();
    });
    return this.run;
  }

  /** Reaps lapsed leases now (one reap at a time per process). */
  reapLapsed(): Promise<{ job: HeldJob; rule: LapseRule }[]> {
    this.reaping ??= this.store
      .reapLapsed(new Date(), this.heartbeat)
      .then((reaped) => {
        if (reaped.length > 0) this.reaped(reaped);
        return reaped;
      })
      .finally(() => (this.reaping = null));
    return this.reaping;
  }

  private tick(): void {
    // While the circuit is open the worker does not even scan: nothing it claimed could be done.
    if (this.run || this.stopping || this.circuit.mode() === 'open' || this.database.paused) return;
    this.processDue().then(
      () => this.succeeded('run'),
      (error: unknown) => this.failed('run', error),
    );
  }

  /**
   * A failing run or reap is logged once, not on every tick (the database away fails them all), and the
   * first success after it says how many failed.
   */
  private failed(what: 'run' | 'reap', error: unknown): void {
    if (this.failures[what]++ > 0) return;
    const label = what === 'run' ? 'Run' : 'Reaping';
    this.logger.error(
      `${label} failed: ${(error as Error).message}; retried on every tick`,
      (error as Error).stack,
    );
  }

  private succeeded(what: 'run' | 'reap'): void {
    const failed = this.failures[what];
    if (failed === 0) return;
    this.failures[what] = 0;
    this.logger.log(`${what === 'run' ? 'Runs' : 'Reaping'} work again after ${failed} failure(s)`);
  }

  private async runOnce(): Promise<RunSummary<Outcome['status']>> {
    // Outcomes by status: the kind's success, and the engine's two of a failed attempt (`failedAttempt`).
    const summary = Object.fromEntries(
      [this.store.kind.statuses.done, 'failed', 'dead', 'lostRaces', 'reaped', 'postponed'].map((key) => [
        key,
        0,
      ]),
    ) as RunSummary<Outcome['status']>;
    try {
      summary.reaped = (await this.reapLapsed()).length;
      while (!this.stopping && !this.database.paused) {
        const mode = this.circuit.mode();
        if (mode === 'open') break;
        const scan = this.store.scanDue(this.settings().scanSize);
        let claimed: number;
        try {
          claimed = await this.work(scan, summary, mode);
        } finally {
          await scan.close();
        }
        // Nothing was due, or every job of the scan went to other workers: leave the rest to the next tick.
        if (claimed === 0) break;
      }
    } finally {
      this.runEnded();
    }
    return summary;
  }

  /**
   * Works through one scan until it is exhausted or stale, or the circuit's mode changes (a probe: one slot,
   * one job at a time, until the circuit closes or opens again); returns how many jobs this worker claimed.
   */
  private async work(
    scan: DueScan<Due>,
    summary: RunSummary<Outcome['status']>,
    mode: 'closed' | 'probe',
  ): Promise<number> {
    const settings = this.settings();
    const concurrency = mode === 'probe' ? 1 : settings.concurrency;
    if (this.rate?.perSecond !== settings.ratePerSecond) this.rate = new RateLimiter(settings.ratePerSecond);
    const rate = this.rate;
    const scanState = this.newScan();
    const scanToken = randomBytes(12).toString('hex');
    const freshUntil = Date.now() + settings.rescanAfterMs;
    let claimed = 0;
    const feed = new ClaimFeed<Job, Due>(
      async () => this.prepareDue(await scan.next(), scanState),
      () => Date.now() >= freshUntil,
      concurrency,
      async (batch) => {
        const jobs = await this.store.claimMany(
          batch,
          (job) => `${scanToken}.${String(job._id)}`,
          settings.leaseMs,
          new Date(),
          this.heartbeat.id,
        );
        summary.lostRaces += batch.length - jobs.length;
        claimed += jobs.length;
        return jobs;
      },
      mode === 'closed',
    );
    const finished = new FinishBuffer<Outcome, F>(
      (batch) => this.store.finish(batch),
      settings.finishBatchSize,
      this.logger,
      (batch, recorded) => {
        if (recorded < batch.length) void this.explainUnrecorded(batch);
        this.recorded(
          batch.filter((record): record is F => !('postponed' in record)),
          recorded,
        );
      },
    );
    this.finishing = finished;
    // Claims and starts nothing more once a stop begins or the circuit leaves this run's mode.
    const halted = () => this.stopping || this.circuit.mode() !== mode;
    const slot = async () => {
      for (let next = await feed.next(halted); next; next = await feed.next(halted)) {
        const { job, lockToken } = next;
        const entry: HeldEntry<Job> = { job, lockToken, handed: false, repeatable: false };
        this.held.set(lockToken, entry);
        await Promise.race([rate.acquire(), this.stopped]);
        if (halted()) {
          if (this.held.delete(lockToken)) await this.release([entry], 'not started');
          break;
        }
        const result = await this.attempt(job, lockToken, entry, scanState);
        // Released by a stop that reached its limit: the outcome is no longer this worker's to record.
        if (!this.held.delete(lockToken)) continue;
        if ('unavailable' in result) {
          summary.postponed += 1;
          await finished.add(this.postponed(job, lockToken, result.unavailable));
          continue;
        }
        if ('putBack' in result) {
          summary.postponed += 1;
          await finished.add({
            id: job._id as Postponed['id'],
            attempts: job.attempts,
            lockToken,
            postponed: { until: new Date(), error: result.putBack.message },
          });
          continue;
        }
        (summary as Record<string, number>)[result.outcome.status] += 1;
        await finished.add(this.finished(job, lockToken, result.outcome));
      }
    };
    // Every slot settles before the run ends, even when one fails (say, the outcome write): a run that
    // returned early would leave work going that a stop no longer waits for.
    const slots = await Promise.allSettled(Array.from({ length: concurrency }, slot));
    await this.release(
      (await feed.leftovers()).map(({ job, lockToken }) => ({
        job,
        lockToken,
        handed: false,
        repeatable: false,
      })),
      'claimed, not started',
    );
    await finished.flush();
    const failure = slots.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    return claimed;
  }

  /**
   * Runs the job's handler. A job that reached the outside (handed) tells the circuit the dependency
   * answered; one whose dependency was unavailable is to be put back, attempt not counted.
   */
  private async attempt(
    job: Job,
    lockToken: string,
    entry: HeldEntry<Job>,
    scan: Scan,
  ): Promise<
    { outcome: Outcome } | { unavailable: DependencyUnavailableError } | { putBack: MarkNotWrittenError }
  > {
    const type = this.store.kind.typeOf(job);
    const handler = this.handlers.get<JobHandlerFn<Job, Scan, Outcome>>('job', type);
    const context: JobContext<Scan> = {
      lockToken,
      scan,
      handed: async (options) => {
        // Counted as handed from the moment the mark is asked for: a release must never resend it.
        entry.handed = true;
        entry.repeatable = options?.repeatable === true;
        let held: boolean;
        try {
          held = await this.marks.mark(lockToken, entry.repeatable);
        } catch (error) {
          entry.handed = false;
          throw new MarkNotWrittenError(error);
        }
        if (!held) throw new LeaseLostError();
      },
    };
    try {
      if (!handler) throw new Error(`No @JobHandler for job type "${type}"`);
      const outcome = await handler(job, context);
      if (entry.handed) this.circuit.reached();
      return { outcome };
    } catch (error) {
      if (error instanceof DependencyUnavailableError) {
        this.circuit.unavailable(error);
        return { unavailable: error };
      }
      if (error instanceof MarkNotWrittenError) return { putBack: error };
      if (entry.handed && !(error instanceof LeaseLostError)) this.circuit.reached();
      return { outcome: this.failure(job, error) };
    }
  }

  /**
   * Says what became of outcomes a batch write did not record. A job whose status is the one its outcome
   * sets was recorded by an earlier try of the same write (the database applied it and the answer was lost,
   * say in an outage); any other was taken from this worker (reaped, its holder judged dead) and is
   * named with its status now.
   */
  private async explainUnrecorded(batch: (F | Postponed)[]): Promise<void> {
    try {
      const states = await this.store.statusesOf(batch.map((record) => record.id));
      const taken = batch.filter((record) => {
        const now = states.get(String(record.id));
        return now === undefined || now !== this.store.statusAfter(record);
      });
      const already = batch.length - taken.length;
      if (already > 0) {
        this.logger.log(`${already} outcome(s) had been recorded by an earlier try of the write`);
      }
      if (taken.length > 0) {
        const list = taken.map(
          (record) => `${String(record.id)} (${states.get(String(record.id)) ?? 'gone'})`,
        );
        this.logger.warn(
          `${taken.length} outcome(s) not recorded: the job was no longer this worker's: ${list.join(', ')}`,
        );
      }
    } catch (error) {
      this.logger.warn(
        `Some outcomes were not recorded, and reading why failed: ${(error as Error).message}`,
      );
    }
  }

  /** A job put back until the circuit's next probe (a later scan then finds it due). */
  private postponed(job: Job, lockToken: string, error: DependencyUnavailableError): Postponed {
    return {
      id: job._id as Postponed['id'],
      attempts: job.attempts,
      lockToken,
      postponed: { until: this.circuit.nextProbeAt, error: error.message },
    };
  }

  /** Gives held jobs back to the queue (see `LeaseQueueStore.giveBack`). */
  private async release(entries: HeldEntry<Job>[], why: string): Promise<void> {
    if (entries.length === 0) return;
    const jobs: HeldClaim[] = entries.map(({ job, lockToken, handed, repeatable }) => ({
      job: {
        ...(job as object),
        _id: job._id as HeldJob['_id'],
        attempts: job.attempts,
        handed: !handed ? 'no' : repeatable ? 'repeatable' : 'yes',
      },
      lockToken,
    }));
    try {
      const released = await this.store.giveBack(jobs);
      this.logger.log(`Released ${released} job(s): ${why}`);
    } catch (error) {
      // They lapse instead, and the reaper applies the same rule.
      this.logger.error(`Releasing ${jobs.length} job(s) failed: ${(error as Error).message}`);
    }
  }
}

/** A job this worker holds, and whether (and how) it was handed. */
interface HeldEntry<Job> {
  job: Job;
  lockToken: string;
  handed: boolean;
  repeatable: boolean;
}

const noop = () => undefined;

/** True when `work` settled within `ms`; the timer is cleared either way. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>(
    (resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))),
  );
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Workers scanning the same due jobs take them in different orders, so they rarely race for one job; the
 * priority order stays (a shuffle, then a stable sort by priority).
 */
export function spreadWithinPriority<Due extends DueJob>(jobs: Due[]): Due[] {
  for (let i = jobs.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
  }
  return jobs.sort((a, b) => b.priority - a.priority);
}
