import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { ChatNotifier } from '../../chat/chat-notifier';
import type { AppConfig } from '../../config/env';
import { EmailEvents, type CampaignHeldEvent } from '../email.events';
import { CampaignHolds } from '../jobs/campaign-holds';
import { CampaignCounters } from './schemas/analytics.schemas';

/**
 * When the guard holds: above `ratePercent` complaints of delivered mail (COMPLAINT_GUARD_RATE_PERCENT,
 * 0.1 by default: Gmail's target; its ceiling is 0.3), once `minDelivered` messages are delivered.
 */
export interface ComplaintRule {
  ratePercent: number;
  minDelivered: number;
}

/** Whether a campaign's complaints call for a hold (pure, unit-tested). */
export function complaintsTooHigh(delivered: number, complained: number, rule: ComplaintRule): boolean {
  return delivered >= rule.minDelivered && complained * 100 > delivered * rule.ratePercent;
}

/**
 * Holds a campaign whose complaints exceed the rule (0.1% of its delivered messages once it has 1,000
 * deliveries, by default): its
 * remaining messages are not sent (CampaignHolds), the campaign shows why (its owner listens to
 * `EmailEvents.CampaignHeld`), and the app's `email` chat channel is told. Checked after each delivery or
 * complaint of the campaign, on the counters (one read by `_id`, or one for a batch of webhooks). A campaign
 * is held once: after an admin resumed it, the guard leaves it alone.
 */
@Injectable()
export class ComplaintGuard {
  private readonly rule: ComplaintRule;

  constructor(
    @InjectModel(CampaignCounters.name) private readonly counters: Model<CampaignCounters>,
    private readonly holds: CampaignHolds,
    private readonly events: EventEmitter2,
    private readonly chat: ChatNotifier,
    config: ConfigService<AppConfig, true>,
  ) {
    this.rule = {
      ratePercent: config.get('COMPLAINT_GUARD_RATE_PERCENT', { infer: true }),
      minDelivered: config.get('COMPLAINT_GUARD_MIN_DELIVERED', { infer: true }),
    };
  }

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
    if (!complaintsTooHigh(delivered, complained, this.rule)) return false;
    const percent = ((complained / delivered) * 100).toFixed(2);
    const reason =
      `Held by the complaint guard: ${complained} complaints for ${delivered} delivered messages ` +
      `(${percent}%, above ${this.rule.ratePercent}%)`;
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
