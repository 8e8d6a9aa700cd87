import {
  type BeforeApplicationShutdown,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ClaimFeed } from './claim-feed';
import { DatabasePause } from './database-pause';
import { Circuit, DEFAULT_CIRCUIT, DependencyUnavailableError } from './circuit';
import { FinishBuffer } from './finish-buffer';
import { HandedMarks } from './handed-marks';
import type { JobContext, JobHandlerFn } from './job-context';
import type { KindRuntime } from './kind-runtime';
import type {
  Claimed,
  DueScan,
  Finished,
  HeldClaim,
  LeaseQueueStore,
  Postponed,
  Reaped,
} from './lease-queue.store';
import type { DueJob, DueOf, HeldJob, JobOf, KindTypes, OutcomeOf, ScanOf } from './queue-kind';
import { RateLimiter, stopForWaits } from './rate-limiter';
import { type FailedAttempt, failedAttempt } from './retry-policy';

export type { JobContext, JobHandlerFn } from './job-context';

/** How a worker runs: the kind's settings (`KindSettings`), read at the start of every run. */
export type WorkerSettings = ReturnType<KindRuntime<KindTypes>['settings']>;

/** What a kind's record of an outcome carries (the engine's fields, and the kind's `record`). */
export type RecordOf<T extends KindTypes> = Finished<OutcomeOf<T>> &
  (T['record'] extends object ? T['record'] : unknown);

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
 * The polling worker of the lease-queue engine (docs/queue.md). Every `intervalMs` a run
 * scans due jobs and works through them with `concurrency` slots: a feed claims the next `concurrency`
 * scanned jobs in one round trip, each slot waits for the rate limiter, runs the job's `@JobHandler` and
 * hands its outcome to a buffer written in batches (retried, never dropped). A run scans again while jobs
 * are due and this worker still wins some. A kind with lanes (`QueueKind.lanes`) runs one such run per
 * lane, each with its own slots and rate limiter, so a lane's backlog never holds up another lane.
 * Lapsed leases are reaped at the start of a run and by a timer of their own, so a busy or stuck run does
 * not stop reaping. A stop is bounded by `shutdownMs`: claimed jobs not started are released at once, jobs
 * in flight finish or are released at the limit. A handler that throws `DependencyUnavailableError` opens
 * the worker's circuit: its job is put back with the attempt not counted, the worker claims nothing more,
 * then probes with one job at a time until the dependency answers. A kind adds what it needs through the
 * hooks (`newScan`, `prepareDue`, `recordOf`, `recorded`, `reaped`, `runEnded`) of a subclass.
 */
export class PollingWorker<T extends KindTypes>
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  protected readonly logger: Logger;
  private readonly name: string;
  /** The run in progress of each lane (`''` for a kind without lanes). */
  private readonly runs = new Map<string, Promise<RunSummary<OutcomeOf<T>['status']>>>();
  private stopping = false;
  /** Aborted when a stop begins (ends the slots' waits for the rate limiter). */
  private readonly stopSignal = stopForWaits();
  private lastRunEndedAt: Date | null = null;
  private readonly rates = new Map<string, RateLimiter>();
  private reaping: Promise<Reaped[]> | null = null;
  /** Jobs this worker holds and has started, by lock token (released when a stop reaches its limit). */
  private readonly held = new Map<string, HeldEntry<T['job']>>();
  /**
   * Every lock token this worker may hold: added before its claim is sent, dropped once the job's outcome
   * is written or the job is given back (or the claim failed). A lapsed lease under this worker's id whose
   * token is not here is an orphan (`LeaseQueueStore.reapLapsed`).
   */
  private readonly owned = new Set<string>();
  private readonly finishing = new Set<FinishBuffer<OutcomeOf<T>, RecordOf<T>>>();
  private readonly marks: HandedMarks;
  private readonly circuit: Circuit;
  private readonly database: DatabasePause;
  private heartbeatStarted = false;
  /** Lanes jobs were added to while their run was under way: each runs again as soon as it ends. */
  private readonly addedDuringRun = new Set<string>();
  private stopListening: () => void = noop;
  /** Runs (or reaps) failing in a row: the first failure of a streak is logged, and the recovery. */
  private readonly failures = { run: 0, reap: 0 };

  constructor(
    private readonly runtime: KindRuntime<T>,
    protected readonly store: LeaseQueueStore<T>,
  ) {
    this.name = `${runtime.kind.name} worker`;
    this.logger = new Logger(this.name);
    this.marks = new HandedMarks((tokens, repeatable) => store.markHanded(tokens, repeatable));
    this.circuit = new Circuit(() => this.settings().circuit ?? DEFAULT_CIRCUIT, this.logger);
    this.database = new DatabasePause(runtime.availability, this.logger);
  }

  /** The kind's settings now (those of `lane`: its own slots and rate budget). */
  protected settings(lane = ''): WorkerSettings {
    return this.runtime.settings(lane || undefined);
  }

  /** The lanes a run works (one unnamed lane for a kind without lanes). */
  private get lanes(): readonly string[] {
    return this.store.kind.lanes?.names ?? [''];
  }

  /** The outcome of an attempt that threw: the kind's retry rule (`failedAttempt`). */
  protected failure(job: T['job'], error: unknown): FailedAttempt {
    const { kind } = this.store;
    const settings = this.settings();
    const failed = failedAttempt(
      {
        maxAttempts: (held: T['job']) => kind.retry.maxAttempts?.(held) ?? settings.maxAttempts,
        backoff: () => settings.backoff,
        isPermanent: (error: unknown) => kind.retry.isPermanent?.(error) === true,
      },
      job,
      error,
    );
    if (failed.status === 'dead') {
      this.logger.warn(
        `${kind.name} job ${String(job._id)} is dead after ${job.attempts} attempt(s): ${failed.error}`,
      );
    }
    return failed;
  }

  /** Fresh state for the jobs of one scan. */
  protected newScan(): ScanOf<T> {
    return undefined;
  }

  /**
   * Scanned jobs before they are claimed (a kind may read what it needs); by default spread within priority.
   */
  protected prepareDue(due: DueOf<T>[], _scan: ScanOf<T>): Promise<DueOf<T>[]> {
    return Promise.resolve(spreadWithinPriority(due));
  }

  /** What a kind's record of an outcome carries besides the engine's fields, for `recorded`. */
  protected recordOf(_job: T['job'], _outcome: OutcomeOf<T>): Omit<RecordOf<T>, keyof Finished<unknown>> {
    return {} as Omit<RecordOf<T>, keyof Finished<unknown>>;
  }

  private finished(job: T['job'], lockToken: string, outcome: OutcomeOf<T>): RecordOf<T> {
    const id = job._id as Finished<unknown>['id'];
    return { ...this.recordOf(job, outcome), id, attempts: job.attempts, lockToken, outcome };
  }

  /** After a batch of outcomes is written (`recorded` of them were still held). */
  protected recorded(_batch: RecordOf<T>[], _recorded: number): void {}

  /** After lapsed leases were reaped. */
  protected reaped(_reaped: Reaped[]): void {}

  /** After a run of a lane, however it ended. */
  protected runEnded(): void {}

  /** The boot refuses a kind whose declared job types and handlers disagree (`JobHandlers.check`). */
  onModuleInit(): void {
    this.runtime.handlers.check(this.store.kind.name, this.store.kind.jobTypes);
  }

  /** Starts the timers (a kind may first prepare its jobs: a subclass awaits, then calls this). */
  onApplicationBootstrap(): Promise<void> {
    const settings = this.settings();
    if (!settings.enabled) return Promise.resolve();
    this.database.watch();
    this.runtime.heartbeat.start();
    this.heartbeatStarted = true;
    this.runtime.scheduler.addInterval(
      this.name,
      setInterval(() => this.tick(), settings.intervalMs),
    );
    this.stopListening = this.runtime.jobsAdded.listen((lane) => this.jobsAdded(lane));
    this.runtime.scheduler.addInterval(
      `${this.name}.reaper`,
      setInterval(() => {
        if (this.database.paused) return;
        this.reapLapsed().then(
          () => this.succeeded('reap'),
          (error: unknown) => this.failed('reap', error),
        );
      }, settings.reapEveryMs),
    );
    const lanes = this.lanes.map((lane) => {
      const own = this.settings(lane);
      const label = lane ? `${lane}: ` : '';
      return `${label}concurrency ${own.concurrency}, rate ${own.ratePerSecond || 'unlimited'}/s`;
    });
    this.logger.log(`Polling every ${settings.intervalMs} ms (${lanes.join('; ')})`);
    return Promise.resolve();
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
      if (this.heartbeatStarted) await this.runtime.heartbeat.stop();
      this.heartbeatStarted = false;
    }
  }

  private async stop(): Promise<void> {
    this.stopping = true;
    this.stopListening();
    this.stopSignal.abort();
    this.database.unwatch();
    const { scheduler } = this.runtime;
    for (const name of [this.name, `${this.name}.reaper`]) {
      if (scheduler.doesExist('interval', name)) scheduler.deleteInterval(name);
    }
    const runs = [...this.runs.values()];
    if (runs.length === 0) return;
    const limitMs = this.settings().shutdownMs;
    const deadline = Date.now() + limitMs;
    // Most of the time for the work in flight; the rest to release what is still running and record outcomes.
    const reserveMs = Math.min(2_000, limitMs / 4);
    if (await within(Promise.allSettled(runs), limitMs - reserveMs)) return;
    const stuck = [...this.held.values()];
    this.held.clear();
    for (const buffer of this.finishing) buffer.giveUpAt = deadline;
    this.logger.warn(`Stopping with ${stuck.length} job(s) still running: released`);
    await within(this.release(stuck, 'still running at the stop limit'), deadline - Date.now());
    const flushed = Promise.all([...this.finishing].map((buffer) => buffer.flush()));
    await within(flushed, deadline - Date.now());
  }

  /** When this process's last run ended (reported by `/health`); null before the first. */
  get lastRunAt(): Date | null {
    return this.lastRunEndedAt;
  }

  /**
   * Works every lane until nothing is due (or a stop begins). A lane whose run is in progress is joined,
   * so one process never runs a lane twice at once and a stop can wait for it.
   */
  async processDue(): Promise<RunSummary<OutcomeOf<T>['status']>> {
    const summaries = await Promise.all(this.lanes.map((lane) => this.processLane(lane)));
    const total: Record<string, number> = {};
    for (const summary of summaries) {
      for (const [key, count] of Object.entries(summary)) total[key] = (total[key] ?? 0) + count;
    }
    return total as RunSummary<OutcomeOf<T>['status']>;
  }

  private processLane(lane: string): Promise<RunSummary<OutcomeOf<T>['status']>> {
    let run = this.runs.get(lane);
    if (!run) {
      run = this.runOnce(lane).finally(() => {
        this.runs.delete(lane);
        this.lastRunEndedAt = new Date();
        // Its scans may have missed them (read before their insert): one more run looks.
        if (this.addedDuringRun.delete(lane)) setImmediate(() => this.startRun(lane));
      });
      this.runs.set(lane, run);
    }
    return run;
  }

  /** Reaps lapsed leases now (one reap at a time per process); `now` is for tests. */
  reapLapsed(now = new Date()): Promise<Reaped[]> {
    const own = { workerId: this.runtime.heartbeat.id, holds: (token: string) => this.owned.has(token) };
    this.reaping ??= this.store
      .reapLapsed(now, this.runtime.heartbeat, own)
      .then((reaped) => {
        const orphans = reaped.filter((job) => job.orphan).length;
        if (orphans > 0) {
          this.logger.warn(
            `Released ${orphans} job(s) this worker had claimed without learning it (the claim's answer was lost)`,
          );
        }
        if (reaped.length > 0) this.reaped(reaped);
        return reaped;
      })
      .finally(() => (this.reaping = null));
    return this.reaping;
  }

  /** Starts a run of each lane that has none (a lane's long backlog does not keep the others waiting). */
  private tick(): void {
    for (const lane of this.lanes) this.startRun(lane);
  }

  /** Jobs due now were added to `lane` in this process: run it now, not at the next poll. */
  private jobsAdded(lane: string): void {
    if (!this.lanes.includes(lane)) return;
    if (this.runs.has(lane)) this.addedDuringRun.add(lane);
    else this.startRun(lane);
  }

  /** Starts a run of `lane` unless one is under way. */
  private startRun(lane: string): void {
    // While the circuit is open the worker does not even scan: nothing it claimed could be done.
    if (this.stopping || this.circuit.mode() === 'open' || this.database.paused) return;
    if (this.runs.has(lane)) return;
    this.processLane(lane).then(
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

  private async runOnce(lane: string): Promise<RunSummary<OutcomeOf<T>['status']>> {
    // Outcomes by status: the kind's success, and the engine's two of a failed attempt (`failedAttempt`).
    const summary = Object.fromEntries(
      [this.store.kind.statuses.done, 'failed', 'dead', 'lostRaces', 'reaped', 'postponed'].map((key) => [
        key,
        0,
      ]),
    ) as RunSummary<OutcomeOf<T>['status']>;
    try {
      summary.reaped = (await this.reapLapsed()).length;
      while (!this.stopping && !this.database.paused) {
        const mode = this.circuit.mode();
        if (mode === 'open') break;
        const scan = this.store.scanDue(this.settings(lane).scanSize, new Date(), lane || undefined);
        let claimed: number;
        try {
          claimed = await this.work(lane, scan, summary, mode);
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
    lane: string,
    scan: DueScan<DueOf<T>>,
    summary: RunSummary<OutcomeOf<T>['status']>,
    mode: 'closed' | 'probe',
  ): Promise<number> {
    const settings = this.settings(lane);
    const concurrency = mode === 'probe' ? 1 : settings.concurrency;
    let rate = this.rates.get(lane);
    if (rate?.perSecond !== settings.ratePerSecond) {
      rate = new RateLimiter(settings.ratePerSecond);
      this.rates.set(lane, rate);
    }
    const scanState = this.newScan();
    const scanToken = randomBytes(12).toString('hex');
    const freshUntil = Date.now() + settings.rescanAfterMs;
    let claimed = 0;
    const feed = new ClaimFeed<T['job'], DueOf<T>>(
      async () => this.prepareDue(await scan.next(), scanState),
      () => Date.now() >= freshUntil,
      concurrency,
      async (batch) => {
        const tokens = batch.map((job) => `${scanToken}.${String(job._id)}`);
        for (const token of tokens) this.owned.add(token);
        let jobs: Claimed<T['job']>[] = [];
        try {
          jobs = await this.store.claimMany(
            batch,
            (_job, i) => tokens[i],
            settings.leaseMs,
            new Date(),
            this.runtime.heartbeat.id,
          );
        } finally {
          // Tokens of jobs lost to another worker, or of a claim that failed (applied or not: if it was,
          // its jobs are orphans the reaper releases once their lease lapses).
          const won = new Set(jobs.map((job) => job.lockToken));
          for (const token of tokens) if (!won.has(token)) this.owned.delete(token);
        }
        summary.lostRaces += batch.length - jobs.length;
        claimed += jobs.length;
        return jobs;
      },
      mode === 'closed',
    );
    const finished = new FinishBuffer<OutcomeOf<T>, RecordOf<T>>(
      (batch) => this.store.finish(batch),
      settings.finishBatchSize,
      this.logger,
      (batch, recorded) => {
        for (const record of batch) this.owned.delete(record.lockToken);
        if (recorded < batch.length) void this.explainUnrecorded(batch);
        this.recorded(
          batch.filter((record): record is RecordOf<T> => !('postponed' in record)),
          recorded,
        );
      },
    );
    this.finishing.add(finished);
    // Claims and starts nothing more once a stop begins or the circuit leaves this run's mode.
    const halted = () => this.stopping || this.circuit.mode() !== mode;
    const slot = async () => {
      for (let next = await feed.next(halted); next; next = await feed.next(halted)) {
        const { job, lockToken } = next;
        const entry: HeldEntry<T['job']> = { job, lockToken, handed: false, repeatable: false };
        this.held.set(lockToken, entry);
        await rate.acquire(this.stopSignal.signal);
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
    this.finishing.delete(finished);
    const failure = slots.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    return claimed;
  }

  /**
   * Runs the job's handler. A job that reached the outside (handed) tells the circuit the dependency
   * answered; one whose dependency was unavailable is to be put back, attempt not counted.
   */
  private async attempt(
    job: T['job'],
    lockToken: string,
    entry: HeldEntry<T['job']>,
    scan: ScanOf<T>,
  ): Promise<
    { outcome: OutcomeOf<T> } | { unavailable: DependencyUnavailableError } | { putBack: MarkNotWrittenError }
  > {
    const { kind } = this.store;
    const type = kind.typeOf?.(job) ?? (job as { type?: string }).type ?? kind.jobTypes[0];
    const handler = this.runtime.handlers.get<JobHandlerFn<T>>('job', type);
    const context: JobContext<ScanOf<T>> = {
      lockToken,
      scan,
      fail: (error) => this.failure(job, error),
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
      // The handler was checked against the kind's payload map where it was declared (`@JobHandler`).
      const outcome = await handler(job as JobOf<T>, context);
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
  private async explainUnrecorded(batch: (RecordOf<T> | Postponed)[]): Promise<void> {
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
  private postponed(job: T['job'], lockToken: string, error: DependencyUnavailableError): Postponed {
    return {
      id: job._id as Postponed['id'],
      attempts: job.attempts,
      lockToken,
      postponed: { until: this.circuit.nextProbeAt, error: error.message },
    };
  }

  /** Gives held jobs back to the queue (see `LeaseQueueStore.giveBack`). */
  private async release(entries: HeldEntry<T['job']>[], why: string): Promise<void> {
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
      // They lapse instead, and this worker's own reaper applies the same rule (no longer owned).
      this.logger.error(`Releasing ${jobs.length} job(s) failed: ${(error as Error).message}`);
    } finally {
      for (const { lockToken } of jobs) this.owned.delete(lockToken);
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
