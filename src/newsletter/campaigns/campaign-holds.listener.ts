import { ConflictException, Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, Model } from 'mongoose';
import { EmailEvents, type CampaignHeldEvent } from '../../email/email.events';
import { EmailService } from '../../email/email.service';
import { CampaignsService } from './campaigns.service';
import { Campaign } from './schemas/campaign.schema';

/** The 409 of resuming a campaign the complaint guard did not hold. */
export const NOT_HELD = 'The campaign is not held';

/**
 * A campaign held by the e-mail engine's complaint guard: the campaign shows why (`heldReason`, `heldAt`;
 * its status stays `sending`), and an admin resumes it, which queues the held messages again. The guard
 * does not hold a resumed campaign a second time.
 */
@Injectable()
export class CampaignHoldsListener {
  constructor(
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly service: CampaignsService,
    private readonly email: EmailService,
  ) {}

  @OnEvent(EmailEvents.CampaignHeld, { suppressErrors: false })
  async onHeld(event: CampaignHeldEvent): Promise<void> {
    if (!isValidObjectId(event.campaignId)) return;
    await this.campaigns
      .updateOne({ _id: event.campaignId }, { $set: { heldReason: event.reason, heldAt: event.heldAt } })
      .exec();
  }

  async resume(appId: string, id: string): Promise<{ released: number; campaign: Campaign }> {
    const campaign = await this.service.get(appId, id);
    if (!campaign.heldReason) throw new ConflictException(NOT_HELD);
    const released = await this.email.releaseCampaign(String(campaign._id));
    const resumed = await this.campaigns
      .findOneAndUpdate(
        { _id: campaign._id, appId },
        { $set: { heldReason: null, heldAt: null } },
        { returnDocument: 'after' },
      )
      .lean<Campaign>()
      .orFail()
      .exec();
    return { released, campaign: resumed };
  }
}
