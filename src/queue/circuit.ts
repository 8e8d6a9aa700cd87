import type { Logger } from '@nestjs/common';

/**
 * Thrown by a handler when what its job needs is out of reach (the SMTP server refused, reset or never
 * answered): the job is not at fault. The engine puts it back with the attempt not counted and opens the
 * worker's circuit, so an outage of any length uses up no job's attempts.
 */
export class DependencyUnavailableError extends Error {
  constructor(
    readonly dependency: string,
    cause: unknown,
  ) {
    super(`${dependency} unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface CircuitSettings {
  /** The wait before the first probe after the circuit opens. */
  firstProbeMs: number;
  /** Waits double after each failed probe, up to this. */
  maxProbeMs: number;
}

export const DEFAULT_CIRCUIT: CircuitSettings = { firstProbeMs: 1_000, maxProbeMs: 30_000 };

/** What a worker may do now: work as usual, try one job (a probe), or claim nothing. */
export type CircuitMode = 'closed' | 'probe' | 'open';

/**
 * A worker's circuit for the dependency its handlers report unavailable. Closed: the worker claims as
 * usual. Opened by a `DependencyUnavailableError`: the worker claims nothing until the probe time, then
 * tries one job; a probe that reaches the dependency (whatever its answer) closes the circuit, one that
 * does not opens it again with twice the wait (capped). One log line when it opens, one when it closes.
 */
export class Circuit {
  private openedAt: number | null = null;
  private dependency = '';
  private probeAt = 0;
  private waitMs = 0;

  constructor(
    private readonly settings: () => CircuitSettings,
    private readonly logger: Logger,
  ) {}

  mode(now = Date.now()): CircuitMode {
    if (this.openedAt === null) return 'closed';
    return now >= this.probeAt ? 'probe' : 'open';
  }

  /** When the next probe may go (for a job put back, so it is not due before then). */
  get nextProbeAt(): Date {
    return new Date(this.probeAt);
  }

  /** An attempt could not reach the dependency. Attempts already under way when it opened change nothing. */
  unavailable(error: DependencyUnavailableError, now = Date.now()): void {
    const { firstProbeMs, maxProbeMs } = this.settings();
    if (this.openedAt === null) {
      this.openedAt = now;
      this.dependency = error.dependency;
      this.waitMs = firstProbeMs;
      this.logger.warn(`${error.message}; claiming paused, probing with one job until it answers`);
    } else if (now >= this.probeAt) {
      // The probe failed: wait longer before the next.
      this.waitMs = Math.min(maxProbeMs, this.waitMs * 2);
    } else {
      return;
    }
    this.probeAt = now + this.waitMs;
  }

  /** An attempt reached the dependency (sent, or answered with a refusal): claiming resumes. */
  reached(now = Date.now()): void {
    if (this.openedAt === null) return;
    const seconds = ((now - this.openedAt) / 1000).toFixed(1);
    this.logger.log(`${this.dependency} reachable again after ${seconds} s: claiming resumed`);
    this.openedAt = null;
  }
}
