import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { isDuplicateKey } from '../../common/database/duplicate-key';
import { EmailJobStore } from './email-job.store';
import { CampaignHold } from './schemas/campaign-hold.schema';

/**
 * Holding a campaign's remaining messages, and releasing them (the engine's holds, docs/queue.md). A held
 * message keeps its status (`pending` or `failed`) but is not due and cannot be claimed, even by a worker
 * that scanned it before the hold. Messages in flight when the hold is set finish. Messages queued for a
 * held campaign later (its plan still running) are held as they come.
 */
@Injectable()
export class CampaignHolds {
  constructor(
    @InjectModel(CampaignHold.name) private readonly holds: Model<CampaignHold>,
    private readonly jobs: EmailJobStore,
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
    await this.holds.updateOne({ _id: campaignId }, { $set: { releasedAt: new Date() } }).exec();
    return this.jobs.release({ campaignId });
  }

  private async holdQueued(campaignId: string): Promise<void> {
    await this.jobs.hold({ campaignId, type: 'email.send' });
  }
}
