import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import escapeStringRegexp from 'escape-string-regexp';
import { type AnyBulkWriteOperation, ObjectId } from 'mongodb';
import { Model } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { cappedCount, COUNT_LIMIT } from '../common/stats/capped-count';
import { InjectKind, type KindRuntime } from '../queue/kind-runtime';
import { LeaseQueueStore } from '../queue/lease-queue.store';
import { CHAT_KIND, type ChatKindTypes } from './chat-kind';
import type { ChatNotice } from './chat-notice';
import { type ChatData, ChatNotification } from './schemas/chat-notification.schema';
import { writeAll } from '../common/database/bulk-writes';

/**
 * Personal fields besides the address: cleared when the person is erased. Notifications carry them in
 * `data` under these names (the signup's first name and the page it came from).
 */
const PERSONAL_FIELDS = ['firstName', 'lastName', 'name', 'referralUrl'];

/**
 * The outbox (`chat_notifications`) as a kind of the lease-queue engine (src/queue/): scans, claims,
 * outcomes and reaping are the engine's; storing, counting and erasure are the outbox's own.
 */
@Injectable()
export class ChatOutboxStore extends LeaseQueueStore<ChatKindTypes> {
  constructor(
    @InjectKind(CHAT_KIND) runtime: KindRuntime<ChatKindTypes>,
    @InjectModel(ChatNotification.name) private readonly model: Model<ChatNotification>,
  ) {
    super(runtime);
  }

  /** Stores a notice as due now; false when its key was already stored. */
  async insert(notice: ChatNotice, now = new Date()): Promise<boolean> {
    const _id = new ObjectId();
    const data = notice.data ?? {};
    const email = typeof data.email === 'string' ? data.email.toLowerCase() : undefined;
    const job = {
      _id,
      appId: notice.appId,
      channel: notice.channel,
      event: notice.event,
      summary: notice.summary,
      data,
      ...(email ? { email } : {}),
      key: notice.key ?? `notice:${String(_id)}`,
      ...this.newJobFields(_id),
      nextAttemptAt: now,
    };
    try {
      await this.model.create(job);
      this.announceAdded([job], now);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /**
   * Notifications waiting to go out: never attempted (`pending`) or to be retried (`failed`), each counted
   * up to COUNT_CAP (a backlog that large reads "at least").
   */
  async countBacklog(maxTimeMS: number): Promise<{ pending: number; failed: number }> {
    const count = async (status: string) =>
      cappedCount(await this.collection.countDocuments({ status }, { maxTimeMS, limit: COUNT_LIMIT })).count;
    const { pending: unstarted, retrying } = this.kind.statuses;
    const [pending, failed] = await Promise.all([count(unstarted), count(retrying)]);
    return { pending, failed };
  }

  /** How many notifications of these events each app got in [from, to). */
  async countEvents(
    events: readonly string[],
    from: Date,
    to: Date,
  ): Promise<{ appId: string; event: string; count: number }[]> {
    const groups = await this.collection
      .aggregate<{ _id: { appId: string; event: string }; count: number }>([
        { $match: { event: { $in: [...events] }, createdAt: { $gte: from, $lt: to } } },
        { $group: { _id: { appId: '$appId', event: '$event' }, count: { $sum: 1 } } },
      ])
      .toArray();
    return groups.map(({ _id, count }) => ({ appId: _id.appId, event: _id.event, count }));
  }

  /**
   * Erasure of one person: every notification that names `email` gets `placeholder` for the address (in
   * `data.email` and wherever it appears in the summary or other texts), loses the personal fields, and is
   * no longer found by the address. Pending ones are then sent without it. Returns how many changed.
   */
  async scrubAddress(email: string, placeholder: string): Promise<number> {
    const address = email.toLowerCase();
    const docs = await this.collection
      .find({ email: address }, { projection: { summary: 1, data: 1 } })
      .toArray();
    if (docs.length === 0) return 0;
    const pattern = new RegExp(escapeStringRegexp(address), 'gi');
    const scrub = (text: string) => text.replace(pattern, placeholder);
    const operations: AnyBulkWriteOperation[] = docs.map((doc) => {
      const data: ChatData = {};
      for (const [key, value] of Object.entries((doc.data ?? {}) as ChatData)) {
        if (key === 'email') data[key] = placeholder;
        else if (PERSONAL_FIELDS.includes(key)) data[key] = null;
        else data[key] = typeof value === 'string' ? scrub(value) : value;
      }
      return {
        updateOne: {
          filter: { _id: doc._id },
          update: {
            $set: { summary: scrub(doc.summary as string), data, updatedAt: new Date() },
            $unset: { email: '' },
          },
        },
      };
    });
    return (await writeAll(this.collection, operations)).modifiedCount;
  }
}
