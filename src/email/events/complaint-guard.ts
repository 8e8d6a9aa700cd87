import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { ChatNotifier } from '../../chat/chat-notifier';
import { EmailEvents, type CampaignHeldEvent } from '../email.events';
import { CampaignHolds } from '../jobs/campaign-holds';
import { CampaignCounters } from './schemas/analytics.schemas';

/** The bulk-sender complaint threshold of the large mailbox providers (Gmail, Yahoo): 0.3% of delivered. */
export const COMPLAINT_RATE_LIMIT = 0.003;
/** Below this many deliveries a few complaints say little: the guard waits. */
export const COMPLAINT_GUARD_MIN_DELIVERED = 1_000;

/** Whether a campaign's complaints call for a hold (pure, unit-tested). */
export function complaintsTooHigh(delivered: number, complained: number): boolean {
  return delivered >= COMPLAINT_GUARD_MIN_DELIVERED && complained > delivered * COMPLAINT_RATE_LIMIT;
}

/**
 * Holds a campaign whose complaints exceed 0.3% of its delivered messages once it has 1,000 deliveries: its
 * remaining messages are not sent (CampaignHolds), the campaign shows why (its owner listens to
 * `EmailEvents.CampaignHeld`), and the app's `email` chat channel is told. Checked after each delivery or
 * complaint of the campaign, on the counters (one read by `_id`, or one for a batch of webhooks). A campaign
 * is held once: after an admin resumed it, the guard leaves it alone.
 */
@Injectable()
export class ComplaintGuard {
  constructor(
    @InjectModel(CampaignCounters.name) private readonly counters: Model<CampaignCounters>,
    private readonly holds: CampaignHolds,
    private readonly events: EventEmitter2,
    private readonly chat: ChatNotifier,
  ) {}

  async check(campaignId: string): Promise<boolean> {
    return (await this.checkMany([campaignId])).length > 0;
  }

  /** `check` for several campaigns with one read of their counters; returns the ids held now. */
  async checkMany(campaignIds: string[]): Promise<string[]> {
    const ids = [...new Set(campaignIds)];
    if (ids.length === 0) return [];
    const found = await this.counters
      .find({ _id: trusted({ $in: ids }) }, { totals: 1, appId: 1 })
      .lean<CampaignCounters[]>()
      .exec();
    const held: string[] = [];
    for (const counters of found) {
      if (await this.holdIfTooHigh(counters)) held.push(String(counters._id));
    }
    return held;
  }

  private async holdIfTooHigh(counters: CampaignCounters): Promise<boolean> {
    const campaignId = String(counters._id);
    const delivered = counters.totals?.delivered ?? 0;
    const complained = counters.totals?.complained ?? 0;
    if (!complaintsTooHigh(delivered, complained)) return false;
    const percent = ((complained / delivered) * 100).toFixed(2);
    const reason =
      `Held by the complaint guard: ${complained} complaints for ${delivered} delivered messages ` +
      `(${percent}%, above ${COMPLAINT_RATE_LIMIT * 100}%)`;
    if (!(await this.holds.hold(campaignId, reason))) return false;
    const held: CampaignHeldEvent = { campaignId, appId: counters.appId, reason, heldAt: new Date() };
    await this.events.emitAsync(EmailEvents.CampaignHeld, held);
    this.chat.notify({
      appId: counters.appId ?? 'service',
      channel: 'email',
      event: 'email.campaign_held',
      summary: 'Campaign held: too many spam complaints',
      data: { campaignId, delivered, complained, reason },
      key: `campaign-held:${campaignId}`,
    });
    return true;
  }
}
