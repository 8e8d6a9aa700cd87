import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import escapeStringRegexp from 'escape-string-regexp';
import { type AnyBulkWriteOperation, ObjectId } from 'mongodb';
import { Model } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { cappedCount, COUNT_LIMIT } from '../common/stats/capped-count';
import type { AppConfig } from '../config/env';
import { LeaseQueueStore } from '../queue/lease-queue.store';
import type { DueJob, QueueKind } from '../queue/queue-kind';
import type { RetryPolicy } from '../queue/retry-policy';
import type { ChatNotice } from './chat-notice';
import { CHAT_DELIVERY_OPTIONS, type ChatDeliveryOptions } from './delivery/delivery-options';
import {
  CHAT_KIND_STATUSES,
  type ChatData,
  type ChatDestinationKind,
  ChatNotification,
  type WebhookFormat,
} from './schemas/chat-notification.schema';
import { writeAll } from '../common/database/bulk-writes';

/** What a worker decided about a notification it holds, and where it was sent. */
export type DeliveryOutcome =
  | { status: 'delivered'; destination: ChatDestinationKind; format?: WebhookFormat }
  | {
      status: 'failed';
      destination?: ChatDestinationKind;
      format?: WebhookFormat;
      error: string;
      retryAt: Date;
    }
  | { status: 'dead'; destination?: ChatDestinationKind; format?: WebhookFormat; error: string };

const DAY_MS = 86_400_000;

export const LAPSED_DELIVERY_ERROR = 'The worker stopped during delivery; tried again';

/**
 * Personal fields besides the address: cleared when the person is erased. Notifications carry them in
 * `data` under these names (the signup's first name and the page it came from).
 */
const PERSONAL_FIELDS = ['firstName', 'lastName', 'name', 'referralUrl'];

/** The one job type of the outbox: deliver a notification (`@JobHandler('chat.deliver')`). */
export const CHAT_DELIVER = 'chat.deliver';

/**
 * The outbox (`chat_notifications`) as a kind of the lease-queue engine (src/queue/): scans, claims,
 * outcomes and reaping are the engine's; storing, counting and erasure are the outbox's own.
 */
@Injectable()
export class ChatOutboxStore extends LeaseQueueStore<ChatNotification, DueJob, DeliveryOutcome> {
  constructor(
    @InjectModel(ChatNotification.name) private readonly model: Model<ChatNotification>,
    config: ConfigService<AppConfig, true>,
    @Inject(CHAT_DELIVERY_OPTIONS) options: ChatDeliveryOptions,
  ) {
    // How long a delivered or dead notification is kept (the digest's counts, a look back): the expiry
    // date is set when it ends and the TTL index expires at that date, so a changed
    // `CHAT_NOTIFICATION_RETENTION_DAYS` applies at restart without rebuilding the index.
    const retentionMs = config.get('CHAT_NOTIFICATION_RETENTION_DAYS', { infer: true }) * DAY_MS;
    super(() => model.collection, chatQueueKind(options, retentionMs));
  }

  /** Stores a notice as due now; false when its key was already stored. */
  async insert(notice: ChatNotice, now = new Date()): Promise<boolean> {
    const _id = new ObjectId();
    const data = notice.data ?? {};
    const email = typeof data.email === 'string' ? data.email.toLowerCase() : undefined;
    try {
      await this.model.create({
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
      });
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
    const [pending, failed] = await Promise.all([count('pending'), count('failed')]);
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

/**
 * Retries with exponential backoff until `maxAttempts` (read at each failure, so a test's changed
 * options apply); a refusal no retry can change is a PermanentJobError (WebhookRefusedError,
 * DestinationRefusedError).
 */
export function chatRetry(options: ChatDeliveryOptions): RetryPolicy<ChatNotification> {
  return { maxAttempts: () => options.maxAttempts, backoff: () => options.backoff };
}

/**
 * The outbox's rules on the engine. A notification whose worker stopped is due again at once (dead when
 * that was its last attempt): a chat line sent twice is better than one lost.
 */
function chatQueueKind(
  options: ChatDeliveryOptions,
  retentionMs: number,
): QueueKind<ChatNotification, DueJob, DeliveryOutcome> {
  const where = (outcome: DeliveryOutcome) => ({
    ...(outcome.destination ? { destination: outcome.destination } : {}),
    ...(outcome.format ? { format: outcome.format } : {}),
  });
  return {
    name: 'chat',
    types: [CHAT_DELIVER],
    typeOf: () => CHAT_DELIVER,
    dueField: 'nextAttemptAt',
    statuses: CHAT_KIND_STATUSES,
    retry: chatRetry(options),
    dueSort: { nextAttemptAt: 1 },
    dueProjection: { _id: 1 },
    dueJobOf: (doc) => ({ _id: doc._id as ObjectId, priority: 0 }),
    outcomeUpdate: (outcome, now) => {
      switch (outcome.status) {
        case 'delivered':
          return { set: { status: 'delivered', ...where(outcome), deliveredAt: now } };
        case 'failed':
          return { set: { ...where(outcome), lastError: outcome.error }, retryAt: outcome.retryAt };
        case 'dead':
          return { set: { status: 'dead', ...where(outcome), lastError: outcome.error } };
      }
    },
    endFields: (now) => ({ expiresAt: new Date(now.getTime() + retentionMs) }),
    heldProjection: {},
    // Read when a lease lapses, so a test's changed options apply.
    lapsed: (job) =>
      job.attempts >= options.maxAttempts
        ? { to: 'dead', error: LAPSED_DELIVERY_ERROR }
        : { to: 'due', error: LAPSED_DELIVERY_ERROR },
  };
}
