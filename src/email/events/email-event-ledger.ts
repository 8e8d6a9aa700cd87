import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, Types } from 'mongoose';
import { insertedIndexes } from '../../common/database/inserted-indexes';
import { EmailEvent } from '../tracking/schemas/email-event.schema';
import { AnalyticsCounters } from './analytics-counters';
import { EventRetention } from './event-retention';

/** An event to write; its `_id` is fixed by the caller, so writing it again cannot count it twice. */
export type NewEmailEvent = Omit<EmailEvent, '_id'> & { _id: Types.ObjectId };

/**
 * The one place e-mail events are written (tracking's buffer, the worker's `sent` events, provider webhooks).
 * Each batch is one unordered insert; only the events inserted now (not refused as duplicates of an earlier
 * write) go on to the analytics counters. A refusal other than duplicates is thrown after the events that
 * did go in were counted, so the caller may retry the whole batch.
 */
@Injectable()
export class EmailEventLedger {
  constructor(
    @InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>,
    private readonly counters: AnalyticsCounters,
    private readonly retention: EventRetention,
  ) {}

  /** Writes the events; returns those written now (the others were written before). */
  async append(batch: NewEmailEvent[]): Promise<NewEmailEvent[]> {
    for (const event of batch) event.expiresAt ??= this.retention.expiresAt(event.createdAt);
    const countInserted = (inserted: Set<number>) =>
      this.counters.countOrLog(batch.filter((_, i) => inserted.has(i)));
    const inserted = await insertedIndexes(this.events.collection, batch, countInserted);
    await countInserted(inserted);
    return batch.filter((_, i) => inserted.has(i));
  }
}
