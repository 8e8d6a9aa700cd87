import { Inject, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { Model } from 'mongoose';
import { classifyBulkWriteFailure, writeAll } from '../../common/database/bulk-writes';
import type { EmailEvent } from './schemas/email-event.schema';
import { TrackedMessage } from './schemas/tracked-message.schema';
import { TRACKING_LIMITS, type TrackingLimits } from './tracking-limits';

type Event = Omit<EmailEvent, '_id'>;
type CappedType = 'opened' | 'clicked';
type TallyDoc = { _id: string } & Document;

const HUMAN_FLAG: Record<CappedType, string> = { opened: 'humanOpened', clicked: 'humanClicked' };
const OVER_CAP: Record<CappedType, string> = { opened: 'openedOverCap', clicked: 'clickedOverCap' };

function cappedType(event: Event): CappedType | null {
  if (event.provider !== 'tracking' || !event.messageId) return null;
  return event.type === 'opened' || event.type === 'clicked' ? event.type : null;
}

/**
 * The per-message cap on open and click events (docs/decisions/security-tracking-replays.md), enforced
 * in the database when a batch is written, so it holds whatever the number of instances: each event takes
 * one slot of its message with a conditional upsert (`opened` below the cap, one unordered bulk write per
 * batch).
 * When the message is full the filter matches nothing and the upsert's insert of the same `_id` is refused
 * as a duplicate: that refusal, reported per operation, is the event's "no". A person's first human open
 * (click) is let through even then, so unique opens stay right when proxies used the slots up first.
 * Refused events are not written; they only bump the message's over-cap counter.
 */
@Injectable()
export class TrackedMessages {
  private readonly collection: Collection<TallyDoc>;
  /** Events that hold a slot: a batch written again after a failure does not take them twice. */
  private readonly slotted = new WeakSet<Event>();

  constructor(
    @InjectModel(TrackedMessage.name) model: Model<TrackedMessage>,
    @Inject(TRACKING_LIMITS) private readonly limits: TrackingLimits,
  ) {
    this.collection = model.collection as unknown as Collection<TallyDoc>;
  }

  /** The events of a batch that may be written, in their order: all but the opens and clicks over the cap. */
  async admit<T extends Event>(events: T[]): Promise<T[]> {
    let waiting = events.filter((event) => cappedType(event) && !this.slotted.has(event));
    if (waiting.length === 0) return events;
    // Twice: a first refusal may be a race, two writers creating the same message's tally at once.
    for (let round = 0; round < 2 && waiting.length > 0; round += 1) waiting = await this.takeSlots(waiting);
    await this.countOverCap(waiting);
    const refused = new Set<Event>(waiting);
    return events.filter((event) => !refused.has(event));
  }

  /** Takes a slot for each event; returns those refused. */
  private async takeSlots<T extends Event>(events: T[]): Promise<T[]> {
    const refused = new Set<number>();
    try {
      await writeAll(
        this.collection,
        events.map((event) => this.takeSlot(event)),
      );
    } catch (error) {
      const failure = classifyBulkWriteFailure(error);
      // The whole batch failed: which slots were taken is unknown, so none is counted as taken.
      if (failure.kind === 'unknown') throw error;
      for (const index of failure.duplicates) refused.add(index);
      for (const entry of failure.others) refused.add(entry.index);
      if (failure.others.length > 0) {
        // The others did take their slot: a retry of the batch must not take them again.
        events.forEach((event, i) => refused.has(i) || this.slotted.add(event));
        throw error;
      }
    }
    events.forEach((event, i) => refused.has(i) || this.slotted.add(event));
    return events.filter((_, i) => refused.has(i));
  }

  private takeSlot(event: Event): AnyBulkWriteOperation<TallyDoc> {
    const type = cappedType(event)!;
    // `$not`: a tally without this field yet (only opens so far, say) has room too.
    const below = { [type]: { $not: { $gte: this.limits.eventsPerMessage } } };
    if (event.automated) {
      return {
        updateOne: {
          filter: { _id: event.messageId!, ...below },
          update: { $inc: { [type]: 1 } },
          upsert: true,
        },
      };
    }
    const human = HUMAN_FLAG[type];
    return {
      updateOne: {
        filter: { _id: event.messageId!, $or: [below, { [human]: { $ne: true } }] },
        update: { $inc: { [type]: 1 }, $set: { [human]: true } },
        upsert: true,
      },
    };
  }

  private async countOverCap(events: Event[]): Promise<void> {
    if (events.length === 0) return;
    const counts = new Map<string, Record<string, number>>();
    for (const event of events) {
      const inc = counts.get(event.messageId!) ?? {};
      const field = OVER_CAP[cappedType(event)!];
      inc[field] = (inc[field] ?? 0) + 1;
      counts.set(event.messageId!, inc);
    }
    await writeAll(
      this.collection,
      [...counts].map(([_id, inc]) => ({ updateOne: { filter: { _id }, update: { $inc: inc } } })),
    );
  }
}
