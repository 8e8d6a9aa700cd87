import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, Model } from 'mongoose';
import { isSendableAddress } from '../../common/validation/email-address';
import type { AudienceMember } from '../../contacts/contacts.service';
import { UnsubscribeLinks } from '../../contacts/unsubscribe/unsubscribe-links';
import { EmailService } from '../../email/email.service';
import type { BatchPlan } from '../../email/jobs/batch-plan';
import { ClickTargetSource, PlanHandler, type PlanOutcome } from '../../email/jobs/email-handlers';
import type { EmailMessage } from '../../email/jobs/email-message';
import { SuppressionService } from '../../email/suppression/suppression.service';
import { splitAtLinks } from '../../email/tracking/tracked-html';
import { LinkDomains } from '../../sender-domains/link-domains';
import { type MemberBatch, SegmentMembers } from '../segments/segment-members';
import { CAMPAIGN_COMPOSER, type CampaignMessageVariables } from './campaign-composer';
import { Campaign } from './schemas/campaign.schema';

/** People read, checked and queued per round: memory stays flat whatever the audience's size. */
export const PLAN_BATCH_SIZE = 500;

export interface CampaignPlan extends BatchPlan {
  kind: 'campaign';
  appId: string;
  campaignId: string;
}

/**
 * Fans a campaign out (the `campaign` kind of `email.batch.plan` jobs). It walks the audience (its segment,
 * less who dropped its topic) in `_id` order with one database cursor, PLAN_BATCH_SIZE people at a time:
 * records people whose stored address breaks the
 * address rule as skipped (`EmailService.recordSkipped`: a finished job each, counted as `failed`), skips
 * suppressed addresses (one query per batch), queues each person's message (address, variables, unsubscribe
 * link: `CampaignComposer` renders it with its tracking links when it is sent) with idempotency keys
 * `campaign:<id>:<person>` in one insert per batch, then checkpoints the last `_id` on the campaign, only
 * once the batch's insert was acknowledged (an insert whose outcome is unknown throws: bulk-writes.ts). A
 * plan that dies or fails is run again by the engine and resumes after the checkpoint: the batch in flight is
 * queued again, and its keys turn it into no new message (no duplicate, no gap). The campaign's figures are
 * counted from the queue (`CampaignProgress`), so they are exact whatever happened in between.
 */
@Injectable()
export class CampaignPlanner {
  constructor(
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly members: SegmentMembers,
    private readonly suppression: SuppressionService,
    private readonly email: EmailService,
    private readonly unsubscribeLinks: UnsubscribeLinks,
    private readonly linkDomains: LinkDomains,
  ) {}

  @PlanHandler('campaign')
  async plan(plan: CampaignPlan): Promise<PlanOutcome> {
    const outcome: PlanOutcome = { enqueued: 0, alreadyQueued: 0 };
    if (!isValidObjectId(plan.campaignId)) return outcome;
    const campaign = await this.campaigns.findById(plan.campaignId).lean<Campaign>().exec();
    if (!campaign || campaign.status !== 'sending') return outcome;
    const campaignId = String(campaign._id);
    const keyOf = (person: AudienceMember) => `campaign:${campaignId}:${person._id}`;
    const linkBase = await this.linkDomains.baseUrlOf(campaign.appId);
    for await (const { people, cursor } of this.audienceOf(campaign)) {
      // Addresses stored before the address rule: recorded as skipped, so one of them cannot fail the batch.
      const unsendable = people.filter((person) => !isSendableAddress(person.email));
      const sendable = people.filter((person) => isSendableAddress(person.email));
      const suppressed = await this.suppression.reasonsFor(
        sendable.map((person) => person.email),
        'broadcast',
      );
      const items = sendable
        .filter((person) => !suppressed.has(person.email))
        .map((person) => ({
          message: this.messageFor(campaign, person, linkBase),
          options: { idempotencyKey: keyOf(person) },
        }));
      const jobs = items.length > 0 ? await this.email.enqueueEmails(items) : [];
      const created = jobs.filter((job) => job.created).length;
      outcome.enqueued += created;
      outcome.alreadyQueued += jobs.length - created;
      const skips = await this.email.recordSkipped(
        unsendable.map((person) => ({
          message: { to: person.email, appId: campaign.appId, campaignId, contactId: person._id },
          idempotencyKey: keyOf(person),
        })),
      );
      if (skips.length > 0) outcome.skipped = (outcome.skipped ?? 0) + skips.length;
      await this.checkpoint(campaignId, cursor);
    }
    // Informational: the campaign completes once the plan job itself is recorded `completed` (the recount
    // reads that from the queue, after this returns).
    await this.campaigns
      .updateOne({ _id: campaign._id, status: 'sending' }, { $set: { planned: true } })
      .exec();
    return outcome;
  }

  /**
   * The campaign's recipients after its checkpoint: its segment's members as the filter was when it started
   * (every active subscriber without one), less the people who dropped its topic. A segment of people who
   * are not active subscribers reaches no one: campaigns go to active subscriptions only.
   */
  private async *audienceOf(campaign: Campaign): AsyncGenerator<MemberBatch> {
    const filter = campaign.audience ?? {};
    if (filter.status && filter.status !== 'active') return;
    const topic = campaign.topic ? { keepsTopics: [campaign.topic] } : {};
    yield* this.members.batches(campaign.appId, filter, campaign.planCursor, PLAN_BATCH_SIZE, topic);
  }

  /** Records that every person up to `cursor` has a queued message. */
  async checkpoint(campaignId: string, cursor: string): Promise<void> {
    await this.campaigns.updateOne({ _id: campaignId }, { $set: { planCursor: cursor } }).exec();
  }

  /**
   * What is queued per person: the address, the variables and the unsubscribe link. The body is composed
   * when the message is sent (CampaignComposer), so the queue does not hold a copy of it per person.
   */
  private messageFor(campaign: Campaign, person: AudienceMember, linkBase: string): EmailMessage {
    const variables: CampaignMessageVariables = {
      firstName: person.firstName,
      lastName: person.lastName,
      email: person.email,
    };
    return {
      to: person.email,
      appId: campaign.appId,
      campaignId: String(campaign._id),
      contactId: person._id,
      composer: CAMPAIGN_COMPOSER,
      variables,
      // Adds List-Unsubscribe and the RFC 8058 one-click header (POST /unsubscribe/{token}); also the
      // template's {{unsubscribeUrl}}.
      // The campaign's topic in the link: the one-click POST drops that topic only.
      unsubscribeUrl: this.unsubscribeLinks.url(
        {
          contactId: person._id,
          appId: campaign.appId,
          ...(campaign.topic ? { topic: campaign.topic } : {}),
        },
        linkBase,
      ),
    };
  }

  /**
   * Where `/c/{token}` may send a campaign's clicks: the link table fixed when it was sent. A test copy's
   * click (`draft`) follows a draft's links as they are now (the same split the send will fix).
   */
  @ClickTargetSource()
  async linkTable(campaignId: string, options: { draft?: boolean } = {}): Promise<string[] | null> {
    if (!isValidObjectId(campaignId)) return null;
    const campaign = await this.campaigns
      .findById(campaignId, { links: 1, status: 1, htmlContent: 1 })
      .lean<Pick<Campaign, 'links' | 'status' | 'htmlContent'>>()
      .exec();
    if (!campaign) return null;
    if (campaign.status !== 'draft') return campaign.links;
    return options.draft ? splitAtLinks(campaign.htmlContent).links : null;
  }
}
