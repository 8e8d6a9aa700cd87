/**
 * How much one message's opens and clicks may cost (docs/decisions/security-tracking-replays.md): fixed
 * numbers, not settings (an operator has no reason to tune them), provided as a value so a test can shorten
 * the replay window.
 */
export interface TrackingLimits {
  /** Repeats of one open (or of one link's click) of one message within this long are one event. */
  replayWindowMs: number;
  /** Open (and, apart, click) events one message records at most; later ones only bump its counter. */
  eventsPerMessage: number;
  /** Entries the in-process replay window holds at most (about 150 bytes each). */
  windowEntries: number;
}

export const TRACKING_LIMITS = Symbol('TRACKING_LIMITS');

export const DEFAULT_TRACKING_LIMITS: TrackingLimits = {
  replayWindowMs: 60_000,
  eventsPerMessage: 50,
  windowEntries: 100_000,
};
