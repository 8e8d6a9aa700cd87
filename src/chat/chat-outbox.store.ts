import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import escapeStringRegexp from 'escape-string-regexp';
import { type AnyBulkWriteOperation, ObjectId } from 'mongodb';
import { Model } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import type { AppConfig } from '../config/env';
import type { ChatNotice } from './chat-notice';
import {
  CLAIMABLE_STATUSES,
  type ChatData,
  type ChatDestinationKind,
  ChatNotification,
  type WebhookFormat,
} from './schemas/chat-notification.schema';

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

/** The key a claimable notification is claimed by, for the attempt that comes next. */
export const claimKeyOf = (id: ObjectId, attempts: number) => `${String(id)}.${attempts}`;

/**
 * The outbox's database operations. Claims and outcomes use the driver with filters built here (never from
 * input), as the e-mail queue does: a claim removes the notification's claim key, so of several workers
 * racing for it exactly one wins, and an outcome names the holder's lock token.
 */
@Injectable()
export class ChatOutboxStore {
  /**
   * How long a delivered or dead notification is kept (for the digest's counts and a look back). The expiry
   * date is computed when the notification ends and the TTL index expires at that date, so a changed
   * `CHAT_NOTIFICATION_RETENTION_DAYS` applies at restart without rebuilding the index.
   */
  private readonly retentionMs: number;

  constructor(
    @InjectModel(ChatNotification.name) private readonly model: Model<ChatNotification>,
    config: ConfigService<AppConfig, true>,
  ) {
    this.retentionMs = config.get('CHAT_NOTIFICATION_RETENTION_DAYS', { infer: true }) * DAY_MS;
  }

  private get collection() {
    return this.model.collection;
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
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        claimKey: claimKeyOf(_id, 0),
      });
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /** Claim keys of due notifications, oldest due first. */
  async findDue(limit: number, now = new Date()): Promise<string[]> {
    const docs = await this.collection
      .find(
        { status: { $in: [...CLAIMABLE_STATUSES] }, nextAttemptAt: { $lte: now } },
        { projection: { claimKey: 1 }, sort: { nextAttemptAt: 1 }, limit },
      )
      .toArray();
    return docs.map((doc) => doc.claimKey as string).filter(Boolean);
  }

  /** Takes one notification for this worker under `lockToken`; null when another worker took it first. */
  async claim(
    claimKey: string,
    lockToken: string,
    leaseMs: number,
    now = new Date(),
  ): Promise<ChatNotification | null> {
    const doc = await this.collection.findOneAndUpdate(
      { claimKey },
      {
        $set: {
          status: 'processing',
          lockToken,
          leaseExpiresAt: new Date(now.getTime() + leaseMs),
          updatedAt: now,
        },
        $unset: { claimKey: '' },
        $inc: { attempts: 1 },
      },
      { returnDocument: 'after' },
    );
    return doc as ChatNotification | null;
  }

  /** Records the outcome of a held notification; false when its lease had been reaped meanwhile. */
  async finish(
    held: ChatNotification,
    lockToken: string,
    outcome: DeliveryOutcome,
    now = new Date(),
  ): Promise<boolean> {
    const where = { destination: outcome.destination, format: outcome.format };
    const set: Record<string, unknown> = { status: outcome.status, updatedAt: now };
    for (const [field, value] of Object.entries(where)) if (value) set[field] = value;
    if (outcome.status === 'delivered') {
      Object.assign(set, { deliveredAt: now, expiresAt: this.expiresAt(now) });
    } else if (outcome.status === 'failed') {
      Object.assign(set, {
        lastError: outcome.error,
        nextAttemptAt: outcome.retryAt,
        claimKey: claimKeyOf(held._id, held.attempts),
      });
    } else {
      Object.assign(set, { lastError: outcome.error, expiresAt: this.expiresAt(now) });
    }
    const result = await this.collection.updateOne(
      { lockToken },
      { $set: set, $unset: { lockToken: '', leaseExpiresAt: '' } },
    );
    return result.modifiedCount === 1;
  }

  /**
   * Notifications whose worker stopped holding them (crash, kill) past their lease: due again at once,
   * or dead when that was their last attempt. A chat line sent twice is better than one lost.
   */
  async reapLapsedLeases(maxAttempts: number, now = new Date()): Promise<number> {
    const lapsed = await this.collection
      .find(
        { status: 'processing', leaseExpiresAt: { $lte: now } },
        { projection: { attempts: 1, lockToken: 1 } },
      )
      .toArray();
    let reaped = 0;
    for (const doc of lapsed) {
      const attempts = doc.attempts as number;
      const set =
        attempts >= maxAttempts
          ? { status: 'dead', expiresAt: this.expiresAt(now) }
          : { status: 'failed', nextAttemptAt: now, claimKey: claimKeyOf(doc._id, attempts) };
      const result = await this.collection.updateOne(
        { lockToken: doc.lockToken },
        {
          $set: { ...set, lastError: LAPSED_DELIVERY_ERROR, updatedAt: now },
          $unset: { lockToken: '', leaseExpiresAt: '' },
        },
      );
      reaped += result.modifiedCount;
    }
    return reaped;
  }

  /** Notifications waiting to go out: never attempted (`pending`) or to be retried (`failed`). */
  async countBacklog(maxTimeMS: number): Promise<{ pending: number; failed: number }> {
    const count = (status: string) => this.collection.countDocuments({ status }, { maxTimeMS });
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
    const result = await this.collection.bulkWrite(operations, { ordered: false });
    return result.modifiedCount;
  }

  private expiresAt(endedAt: Date): Date {
    return new Date(endedAt.getTime() + this.retentionMs);
  }
}
