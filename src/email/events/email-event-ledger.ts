import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, Types } from 'mongoose';
import { classifyBulkWriteFailure, insertedIndexes } from '../../common/database/bulk-writes';
import { streamOf } from '../jobs/schemas/email-job.schema';
import { EmailEvent } from '../tracking/schemas/email-event.schema';
import { AnalyticsCounters } from './analytics-counters';
import { EventRetention } from './event-retention';

/** An event to write; its `_id` is fixed by the caller, so writing it again cannot count it twice. */
export type NewEmailEvent = Omit<EmailEvent, '_id'> & { _id: Types.ObjectId };

/** Events of lost batches remembered for their retry (oldest forgotten first). */
const LOST_KEPT = 10_000;

/**
 * The one place e-mail events are written (tracking's buffer, the worker's `sent` events, provider webhooks).
 * Each batch is one unordered insert; only the events inserted now (not refused as duplicates of an earlier
 * write) go on to the analytics counters. A refusal other than duplicates is thrown after the events that
 * did go in were counted, so the caller may retry the whole batch. A batch lost as a whole (its outcome
 * unknown: bulk-writes.ts) counts nothing; its events are remembered, and when the caller's retry finds
 * them written (duplicates of that lost attempt) they are counted then, once.
 */
@Injectable()
export class EmailEventLedger {
  private readonly lost = new Set<string>();

  constructor(
    @InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>,
    private readonly counters: AnalyticsCounters,
    private readonly retention: EventRetention,
  ) {}

  /** Writes the events; returns those written now (the others were written before). */
  async append(batch: NewEmailEvent[]): Promise<NewEmailEvent[]> {
    for (const event of batch) {
      event.expiresAt ??= this.retention.expiresAt(event.createdAt);
      // Writers that know the message's job name its stream; tracking's opens and clicks are campaign mail.
      event.stream ??= streamOf(event);
    }
    const countInserted = (inserted: Set<number>) => {
      const counted = batch.filter((event, i) => inserted.has(i) || this.lost.has(String(event._id)));
      for (const event of counted) this.lost.delete(String(event._id));
      return this.counters.countOrLog(counted);
    };
    let inserted: Set<number>;
    try {
      inserted = await insertedIndexes(this.events.collection, batch, countInserted);
    } catch (error) {
      if (classifyBulkWriteFailure(error).kind === 'unknown') this.remember(batch);
      throw error;
    }
    await countInserted(inserted);
    return batch.filter((_, i) => inserted.has(i));
  }

  private remember(batch: NewEmailEvent[]): void {
    for (const event of batch) this.lost.add(String(event._id));
    for (const id of this.lost) {
      if (this.lost.size <= LOST_KEPT) break;
      this.lost.delete(id);
    }
  }
}
