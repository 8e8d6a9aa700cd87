import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { Types } from 'mongoose';
import { EmailEventLedger, type NewEmailEvent } from '../events/email-event-ledger';
import { ReplayWindow } from './replay-window';
import type { EmailEvent } from './schemas/email-event.schema';
import { TrackedMessages } from './tracked-messages';

export type TrackingEvent = Omit<EmailEvent, '_id'>;
/** An event as buffered: its id is fixed when it is recorded, so writing it again cannot count it twice. */
type BufferedEvent = NewEmailEvent;

/** Events written at most this long after they happen. */
export const FLUSH_INTERVAL_MS = 1_000;
/** Events waiting beyond this are dropped (and counted in a log line) rather than growing without limit. */
export const MAX_BUFFERED_EVENTS = 50_000;
/** One insert per this many events. */
const INSERT_BATCH = 5_000;
/** Deferred events are worked out this many at a time (a few milliseconds of token checks). */
const RESOLVE_BATCH = 500;

/**
 * The event as buffered: its id set on the object itself. The buffer takes the events it is given (every
 * caller builds them for it); a copy per event was most of the garbage a campaign's `sent` events left.
 */
function withId(event: TrackingEvent): BufferedEvent {
  return Object.assign(event, { _id: new Types.ObjectId() });
}

/**
 * Events recorded off the hot paths: opens and clicks off the request path (docs/architecture.md "Tracking":
 * the pixel answers without waiting for the database). The worker's `sent` events are not buffered: they
 * are written with the outcomes (SentEvents). Events collect in memory and are written through the ledger
 * (one insert, then the analytics counters) every second, when a batch fills, and at shutdown (nothing
 * buffered is lost on SIGTERM).
 *
 * Replays are not events (docs/decisions/security-tracking-replays.md): an open or click repeated
 * within the replay window never enters the buffer (ReplayWindow, a lookup in memory), and when a batch is
 * written, opens and clicks beyond their message's cap are left out (TrackedMessages, in the database).
 */
@Injectable()
export class TrackingEvents implements OnModuleInit, BeforeApplicationShutdown, OnModuleDestroy {
  private readonly logger = new Logger(TrackingEvents.name);
  private buffer: BufferedEvent[] = [];
  /** Events still to be worked out (see recordLater). */
  private pending: (() => TrackingEvent | null)[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private dropped = 0;

  constructor(
    private readonly ledger: EmailEventLedger,
    private readonly replays: ReplayWindow,
    private readonly messages: TrackedMessages,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  record(event: TrackingEvent): void {
    this.recordMany([event]);
  }

  recordMany(events: TrackingEvent[]): void {
    // Events keep the order they happened in: those still to be worked out go first.
    this.resolvePending();
    for (const event of events) {
      if (!this.replays.admits(event)) continue;
      if (this.buffer.length >= MAX_BUFFERED_EVENTS) {
        this.dropped += 1;
        continue;
      }
      this.buffer.push(withId(event));
    }
    if (this.buffer.length >= INSERT_BATCH) void this.flush();
  }

  /**
   * An event worked out when the buffer is next written, not while the client waits: the open pixel answers
   * the same GIF for any token, so checking the token's signature (an HMAC) can wait, and a batch of checks
   * in one loop costs less than the same checks spread between requests. `resolve` returns null to record
   * nothing (a forged token); a replay is left out then too.
   */
  recordLater(resolve: () => TrackingEvent | null): void {
    if (this.buffer.length + this.pending.length >= MAX_BUFFERED_EVENTS) {
      this.dropped += 1;
      return;
    }
    this.pending.push(resolve);
    if (this.pending.length < RESOLVE_BATCH) return;
    this.resolvePending();
    if (this.buffer.length >= INSERT_BATCH) void this.flush();
  }

  /** Writes what is buffered; writes run one after another, so a flush waits for the one before. */
  flush(): Promise<void> {
    this.resolvePending();
    const batch = this.buffer;
    this.buffer = [];
    const dropped = this.dropped;
    this.dropped = 0;
    this.writing = this.writing.then(() => this.write(batch, dropped));
    return this.writing;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Also on `app.close()` without shutdown hooks; a second flush of an empty buffer costs nothing. */
  async onModuleDestroy(): Promise<void> {
    await this.beforeApplicationShutdown();
  }

  /**
   * A batch the database refused (it is down, say) goes back into the buffer for the next flush instead of
   * being lost; the events written before the failure are refused the second time by their ids, which
   * counts as written (and the ledger does not count them again). Only the last flush at shutdown can still
   * lose events, and it says how many.
   */
  private async write(batch: BufferedEvent[], dropped: number): Promise<void> {
    if (dropped > 0) this.logger.warn(`${dropped} tracking event(s) dropped: the buffer was full`);
    for (let i = 0; i < batch.length; i += INSERT_BATCH) {
      const slice = batch.slice(i, i + INSERT_BATCH);
      let admitted = slice;
      try {
        admitted = await this.messages.admit(slice);
        await this.ledger.append(admitted);
      } catch (error) {
        const kept = this.requeue(admitted);
        this.logger.error(
          `${admitted.length} tracking event(s) not written (${kept} kept for the next flush): ${(error as Error).message}`,
        );
      }
    }
  }

  /**
   * One that throws is counted and logged, not thrown: the rest of the batch is already out of `pending`,
   * and this runs in a request, a timer or the worker's outcome recording, none of which should fail for it.
   */
  private resolvePending(): void {
    const pending = this.pending;
    this.pending = [];
    let failed = 0;
    for (const resolve of pending) {
      try {
        const event = resolve();
        if (event && this.replays.admits(event)) this.buffer.push(withId(event));
      } catch {
        failed += 1;
      }
    }
    if (failed > 0) this.logger.error(`${failed} deferred tracking event(s) could not be worked out`);
  }

  /** Puts events back at the front of the buffer, within its cap; returns how many were kept. */
  private requeue(events: BufferedEvent[]): number {
    const room = Math.max(0, MAX_BUFFERED_EVENTS - this.buffer.length);
    const kept = events.slice(0, room);
    this.dropped += events.length - kept.length;
    this.buffer = [...kept, ...this.buffer];
    return kept.length;
  }
}
