import { Inject, Injectable } from '@nestjs/common';
import type { EmailEvent } from './schemas/email-event.schema';
import { TRACKING_LIMITS, type TrackingLimits } from './tracking-limits';

/**
 * The first filter of tracking replays (docs/decisions/security-tracking-replays.md): an open or a click
 * seen again within the window is not an event, decided by one lookup in memory. Entries live in a Map in
 * the order they were last taken, so the oldest are at its front: lapsed ones are dropped from there as new
 * ones come, and at the hard cap the oldest goes even if its window is still open (a flood of distinct
 * genuine tokens costs bounded memory; what slips through then is stopped by the per-message cap in the
 * database, TrackedMessages). Per process: several instances each let one through per window, which the
 * per-message cap bounds as well.
 */
@Injectable()
export class ReplayWindow {
  /** Key → when its window opened. */
  private readonly opened = new Map<string, number>();

  constructor(@Inject(TRACKING_LIMITS) private readonly limits: TrackingLimits) {}

  /**
   * Whether an event is recorded: false for an open (a click of one link) of a message seen within the
   * window, true for anything else. Human and automated requests have windows of their own: a person's
   * open right after the mail-privacy proxy fetched the pixel at delivery is still the person's open.
   */
  admits(event: Omit<EmailEvent, '_id'>): boolean {
    if (event.provider !== 'tracking' || (event.type !== 'opened' && event.type !== 'clicked')) return true;
    const who = event.automated ? 'a' : 'h';
    const key = `${event.type}|${who}|${event.messageId}|${event.linkIndex ?? ''}`;
    return this.take(key, event.createdAt.getTime());
  }

  /**
   * True when `key` opens a new window at `now`, false for a repeat within the open one. The time is the
   * event's, not the clock's when the check runs: opens are checked when their batch is worked out.
   */
  private take(key: string, now: number): boolean {
    const since = this.opened.get(key);
    if (since !== undefined && now - since < this.limits.replayWindowMs) return false;
    this.opened.delete(key);
    this.dropLapsed(now);
    if (this.opened.size >= this.limits.windowEntries) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(key, now);
    return true;
  }

  private dropLapsed(now: number): void {
    for (const [key, since] of this.opened) {
      if (now - since < this.limits.replayWindowMs) return;
      this.opened.delete(key);
    }
  }
}
