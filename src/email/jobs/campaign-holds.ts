import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { AnyBulkWriteOperation, Document } from 'mongodb';
import { Model, trusted } from 'mongoose';
import { isDuplicateKey } from '../../common/database/duplicate-key';
import { claimKeyOf } from '../../queue/lease-queue.store';
import { CampaignHold } from './schemas/campaign-hold.schema';
import { CLAIMABLE_STATUSES, EmailJob } from './schemas/email-job.schema';
import { writeAll } from '../../common/database/bulk-writes';

/** Where a held message waits: never due, until its campaign is released. */
export const HELD_UNTIL = new Date('9999-12-31T00:00:00.000Z');
/** Held messages released per write. */
const RELEASE_BATCH = 1_000;

/**
 * Holding a campaign's remaining messages, and releasing them. A held message keeps its status (`pending`
 * or `failed`) but loses its claim key and is scheduled for HELD_UNTIL: no worker finds it due, and a worker
 * that scanned it before the hold cannot claim it (claims go by claim key). Messages in flight when the hold
 * is set finish. Messages queued for a held campaign later (its plan still running) are held as they come.
 */
@Injectable()
export class CampaignHolds {
  constructor(
    @InjectModel(CampaignHold.name) private readonly holds: Model<CampaignHold>,
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
  ) {}

  /** Holds the campaign; false when it is or was held already (a released campaign stays released). */
  async hold(campaignId: string, reason: string): Promise<boolean> {
    try {
      await this.holds.create({ _id: campaignId, reason, heldAt: new Date(), releasedAt: null });
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
    await this.holdQueued(campaignId);
    return true;
  }

  /** After an enqueue: the messages of those campaigns that are held now wait too. One lookup by `_id`. */
  async holdIfHeld(campaignIds: string[]): Promise<void> {
    if (campaignIds.length === 0) return;
    const holds = await this.holds
      .find({ _id: trusted({ $in: [...new Set(campaignIds)] }) })
      .lean<CampaignHold[]>()
      .exec();
    for (const hold of holds) if (!hold.releasedAt) await this.holdQueued(String(hold._id));
  }

  async isHeld(campaignId: string): Promise<boolean> {
    const hold = await this.holds.findById(campaignId).lean<CampaignHold>().exec();
    return hold !== null && hold.releasedAt === null;
  }

  /**
   * Makes the campaign's held messages due now and keeps the guard from holding it again; returns how many.
   */
  async release(campaignId: string): Promise<number> {
    const now = new Date();
    await this.holds.updateOne({ _id: campaignId }, { $set: { releasedAt: now } }).exec();
    let released = 0;
    for (;;) {
      const held = await this.jobs.collection
        .find(
          { campaignId, heldAt: { $exists: true } },
          { projection: { attempts: 1 }, limit: RELEASE_BATCH },
        )
        .toArray();
      if (held.length === 0) return released;
      const operations: AnyBulkWriteOperation<Document>[] = held.map((job) => ({
        updateOne: {
          filter: { _id: job._id },
          update: {
            $set: {
              claimKey: claimKeyOf(job._id, job.attempts as number),
              scheduledAt: now,
              updatedAt: now,
            },
            $unset: { heldAt: '' },
          },
        },
      }));
      released += (await writeAll(this.jobs.collection, operations)).modifiedCount;
    }
  }

  private async holdQueued(campaignId: string): Promise<void> {
    const now = new Date();
    await this.jobs.collection.updateMany(
      { campaignId, type: 'email.send', status: { $in: [...CLAIMABLE_STATUSES] } },
      { $set: { scheduledAt: HELD_UNTIL, heldAt: now, updatedAt: now }, $unset: { claimKey: '' } },
    );
  }
}
