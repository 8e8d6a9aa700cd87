import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, Model } from 'mongoose';
import type { RenderedContent } from '../../email/delivery/template-source';
import { ComposerHandler } from '../../email/jobs/email-handlers';
import type { EmailMessage } from '../../email/jobs/email-message';
import { TrackingLinks } from '../../email/tracking/tracking-links';
import { LinkDomains } from '../../sender-domains/link-domains';
import { CampaignRenderer, type RecipientVariables } from './campaign-renderer';
import { Campaign } from './schemas/campaign.schema';

/** The `composer` kind of campaign messages. */
export const CAMPAIGN_COMPOSER = 'campaign';

/** Compiled campaigns kept in memory: a worker sends a few campaigns at a time, each for a long while. */
const CACHE_SIZE = 20;

/** The per-person fields a campaign message is queued with; the content is the campaign's. */
export type CampaignMessageVariables = Pick<RecipientVariables, 'firstName' | 'lastName' | 'email'>;

/**
 * Renders a campaign's message for one person when the worker sends it (the `campaign` message composer):
 * subject and HTML with the person's variables, the campaign's links turned into their signed tracking
 * URLs, the open pixel, and the plain-text part. The campaign is compiled once per process: its content
 * never changes once it has left the draft state.
 */
@Injectable()
export class CampaignComposer {
  private readonly renderers = new Map<string, Promise<CampaignRenderer | null>>();

  constructor(
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly tracking: TrackingLinks,
    private readonly linkDomains: LinkDomains,
  ) {}

  @ComposerHandler(CAMPAIGN_COMPOSER)
  async compose(message: EmailMessage): Promise<RenderedContent | null> {
    const { campaignId, contactId, appId, unsubscribeUrl } = message;
    if (!campaignId || !contactId || !appId || !unsubscribeUrl) return null;
    const renderer = await this.rendererOf(campaignId);
    if (!renderer) return null;
    const variables = (message.variables ?? {}) as Partial<CampaignMessageVariables>;
    const target = { campaignId, contactId, appId };
    const base = await this.linkDomains.baseUrlOf(appId);
    return renderer.render(
      {
        firstName: variables.firstName ?? null,
        lastName: variables.lastName ?? null,
        email: variables.email ?? message.to,
        unsubscribeUrl,
      },
      {
        links: renderer.links.map((_, linkIndex) => this.tracking.clickUrl({ ...target, linkIndex }, base)),
        open: this.tracking.openUrl(target, base),
      },
    );
  }

  /** The compiled campaign, or null for an unknown one or a draft (its content may still change). */
  private rendererOf(campaignId: string): Promise<CampaignRenderer | null> {
    let renderer = this.renderers.get(campaignId);
    if (!renderer) {
      renderer = this.load(campaignId);
      if (this.renderers.size >= CACHE_SIZE) this.renderers.delete(this.renderers.keys().next().value!);
      this.renderers.set(campaignId, renderer);
      // Only a compiled campaign is kept: after a failed read or none found, the next message reads again.
      const forget = () => void this.renderers.delete(campaignId);
      renderer.then((found) => found ?? forget(), forget);
    }
    return renderer;
  }

  private async load(campaignId: string): Promise<CampaignRenderer | null> {
    if (!isValidObjectId(campaignId)) return null;
    const campaign = await this.campaigns
      .findById(campaignId, { subject: 1, htmlContent: 1, textContent: 1, status: 1 })
      .lean<Pick<Campaign, 'subject' | 'htmlContent' | 'textContent' | 'status'>>()
      .exec();
    return campaign && campaign.status !== 'draft' ? CampaignRenderer.create(campaign, true) : null;
  }
}
