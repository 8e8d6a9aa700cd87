import { BadRequestException, ConflictException, Inject, Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import type { Pagination } from '../../common/http/envelope';
import { findPage } from '../../common/pagination/pagination';
import { findScoped } from '../../common/tenancy/scoped';
import { EmailService } from '../../email/email.service';
import { CAMPAIGN_TEMPLATE_SOURCE, type CampaignTemplateSource } from './campaign-template-source';
import { ContactsService } from '../../contacts/contacts.service';
import { UnsubscribeLinks } from '../../contacts/unsubscribe/unsubscribe-links';
import { TemplateProblem } from '../../email/templates/template-limits';
import { TrackingLinks } from '../../email/tracking/tracking-links';
import { LinkDomains } from '../../sender-domains/link-domains';
import {
  type CampaignContent,
  CampaignRenderer,
  type RecipientVariables,
  templateProblem,
} from './campaign-renderer';
import { CampaignTestRecipients } from './campaign-test-recipients';
import { NewsletterTopicsService } from '../../contacts/topics/newsletter-topics.service';
import { SegmentsService } from '../segments/segments.service';
import {
  type CreateCampaignDto,
  type ListCampaignsQuery,
  SCHEDULE_MAX_AHEAD_MS,
  type UpdateCampaignDto,
  type SampleVariables,
} from './dto/campaign.dto';
import { Campaign } from './schemas/campaign.schema';

const NOT_FOUND = 'Campaign not found';
export const NOT_A_DRAFT = 'Only a draft campaign can be changed, deleted or sent';
export const ALREADY_SENT = 'The campaign has been sent already';
export const NOT_A_DRAFT_TEST = 'Only a draft campaign can be sent as a test';
export const SCHEDULED = 'The campaign is scheduled: unschedule it first';
export const NOT_SCHEDULED = 'The campaign is not scheduled';
const SEGMENT_GONE = 'segmentId: the campaign’s segment no longer exists';
/** What a new campaign's figures and plan start from. */
const FRESH_PLAN = { stats: { total: 0, sent: 0, failed: 0 }, planCursor: null, planned: false };
/** Test copies go before campaign mail in the queue (transactional). */
const TEST_PRIORITY = 10;

/**
 * Campaigns of one app (docs/architecture.md "Campaigns"): drafts are edited freely; sending fixes the
 * content's link table and hands the campaign to a batch plan (`CampaignPlanner`) that queues one message per
 * recipient. Statistics and completion are `CampaignProgress`'s, recounted from the queue.
 */
@Injectable()
export class CampaignsService {
  private readonly logger = new Logger(CampaignsService.name);

  constructor(
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly apps: AppsService,
    private readonly email: EmailService,
    @Inject(CAMPAIGN_TEMPLATE_SOURCE) private readonly templates: CampaignTemplateSource,
    private readonly testRecipients: CampaignTestRecipients,
    private readonly contacts: ContactsService,
    private readonly unsubscribeLinks: UnsubscribeLinks,
    private readonly segments: SegmentsService,
    private readonly topics: NewsletterTopicsService,
    private readonly linkDomains: LinkDomains,
    private readonly tracking: TrackingLinks,
  ) {}

  async list(
    appId: string,
    query: ListCampaignsQuery,
  ): Promise<{ items: Campaign[]; pagination: Pagination }> {
    await this.apps.requireApp(appId);
    return findPage(this.campaigns, {
      filter: { appId, ...(query.status ? { status: query.status } : {}) },
      sort: { createdAt: -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  async create(appId: string, dto: CreateCampaignDto, createdBy: string): Promise<Campaign> {
    await this.apps.requireApp(appId);
    const content = await this.withTemplate(appId, dto);
    await assertCompiles(content);
    await this.checkAudience(appId, dto);
    const created = await this.campaigns.create({
      ...content,
      segmentId: dto.segmentId ?? null,
      topic: dto.topic ?? null,
      appId,
      createdBy,
      status: 'draft',
    });
    return created.toObject<Campaign>();
  }

  async get(appId: string, id: string): Promise<Campaign> {
    await this.apps.requireApp(appId);
    return findScoped(this.campaigns, appId, id, NOT_FOUND);
  }

  async update(appId: string, id: string, dto: UpdateCampaignDto): Promise<Campaign> {
    const current = await this.get(appId, id);
    if (current.status === 'scheduled') throw new ConflictException(SCHEDULED);
    await assertCompiles(dto);
    await this.checkAudience(appId, dto);
    const updated = await this.campaigns
      .findOneAndUpdate(
        { _id: id, appId, status: 'draft' },
        { $set: { ...dto } },
        { returnDocument: 'after' },
      )
      .lean<Campaign>()
      .exec();
    if (!updated) throw new ConflictException(NOT_A_DRAFT);
    return updated;
  }

  async remove(appId: string, id: string): Promise<void> {
    const current = await this.get(appId, id);
    if (current.status === 'scheduled') throw new ConflictException(SCHEDULED);
    const result = await this.campaigns.deleteOne({ _id: id, appId, status: 'draft' }).exec();
    if (result.deletedCount === 0) throw new ConflictException(NOT_A_DRAFT);
  }

  /**
   * `draft` → `scheduled` for `sendAt` (in the future, at most a year ahead), fixing the link table as a send
   * does: the content cannot change until it is unscheduled. CampaignScheduler starts it when its time comes.
   */
  async schedule(appId: string, id: string, sendAt: Date): Promise<Campaign> {
    const now = Date.now();
    if (sendAt.getTime() <= now) throw new BadRequestException('sendAt must be in the future');
    if (sendAt.getTime() > now + SCHEDULE_MAX_AHEAD_MS) {
      throw new BadRequestException('sendAt must be at most a year ahead');
    }
    const draft = await this.get(appId, id);
    if (draft.status === 'scheduled') throw new ConflictException(SCHEDULED);
    const { links } = await rendererOf(draft, true);
    if (draft.segmentId && !(await this.segments.filterOf(appId, draft.segmentId))) {
      throw new BadRequestException(SEGMENT_GONE);
    }
    const scheduled = await this.campaigns
      .findOneAndUpdate(
        { _id: draft._id, appId, status: 'draft' },
        { $set: { status: 'scheduled', sendAt, links } },
        { returnDocument: 'after' },
      )
      .lean<Campaign>()
      .exec();
    if (!scheduled) throw new ConflictException(NOT_A_DRAFT);
    return scheduled;
  }

  /** `scheduled` → `draft`: 409 once the scheduler has started it (or when it was never scheduled). */
  async unschedule(appId: string, id: string): Promise<Campaign> {
    await this.get(appId, id);
    const draft = await this.campaigns
      .findOneAndUpdate(
        { _id: id, appId, status: 'scheduled' },
        { $set: { status: 'draft', sendAt: null, links: [] } },
        { returnDocument: 'after' },
      )
      .lean<Campaign>()
      .exec();
    if (!draft) throw new ConflictException(NOT_SCHEDULED);
    return draft;
  }

  /**
   * `draft` → `sending` in one conditional update (of two concurrent sends, one wins; the other is a 409),
   * which also fixes the link table and the segment's filter; then the plan job is queued. Should queuing
   * fail, the campaign goes back to `draft` so it can be sent again.
   */
  async send(appId: string, id: string): Promise<{ status: 'sending'; jobId: string }> {
    const draft = await this.get(appId, id);
    if (draft.status === 'scheduled') throw new ConflictException(SCHEDULED);
    // Content saved before the template limits existed is checked here, before anything is queued.
    const { links } = await rendererOf(draft, true);
    const audience = draft.segmentId ? await this.segments.filterOf(appId, draft.segmentId) : null;
    if (draft.segmentId && !audience) throw new BadRequestException(SEGMENT_GONE);
    const sending = await this.campaigns
      .findOneAndUpdate(
        { _id: draft._id, appId, status: 'draft' },
        { $set: { status: 'sending', sentAt: new Date(), links, audience, ...FRESH_PLAN } },
        { returnDocument: 'after' },
      )
      .lean<Campaign>()
      .exec();
    if (!sending) throw new ConflictException(ALREADY_SENT);
    try {
      return { status: 'sending', jobId: await this.queuePlan(sending) };
    } catch (error) {
      await this.campaigns
        .updateOne({ _id: draft._id, status: 'sending' }, { $set: { status: 'draft', sentAt: null } })
        .exec();
      throw error;
    }
  }

  /**
   * Starts one scheduled campaign whose time has come, if there is one: `scheduled` → `sending` in one
   * conditional update, so of all the instances whose schedulers look at once, exactly one claims it.
   * Null when none is due.
   */
  async startDue(now: Date): Promise<string | null> {
    const claimed = await this.campaigns
      .findOneAndUpdate(
        { status: 'scheduled', sendAt: trusted({ $lte: now }) },
        { $set: { status: 'sending', sentAt: now, ...FRESH_PLAN } },
        { sort: { sendAt: 1 }, returnDocument: 'after' },
      )
      .lean<Campaign>()
      .exec();
    if (!claimed) return null;
    await this.launch(claimed);
    return String(claimed._id);
  }

  /**
   * Started campaigns whose plan job was never queued because their process stopped in between (claimed
   * before `before`): queued now. The plan job's idempotency key makes a second queuing a no-op.
   */
  async relaunchStranded(before: Date, limit: number): Promise<number> {
    const stranded = await this.campaigns
      .find({ status: 'sending', planJobId: null, sentAt: trusted({ $lte: before }) })
      .limit(limit)
      .lean<Campaign[]>()
      .exec();
    for (const campaign of stranded) await this.launch(campaign);
    return stranded.length;
  }

  /** A claimed campaign: its segment's filter fixed, then its plan queued (failed if the segment is gone). */
  private async launch(campaign: Campaign): Promise<void> {
    const audience = campaign.segmentId
      ? await this.segments.filterOf(campaign.appId, campaign.segmentId)
      : null;
    if (campaign.segmentId && !audience) {
      this.logger.warn(`Campaign ${String(campaign._id)} of app ${campaign.appId}: segment gone, not sent`);
      await this.campaigns
        .updateOne(
          { _id: campaign._id, status: 'sending' },
          { $set: { status: 'failed', completedAt: new Date() } },
        )
        .exec();
      return;
    }
    await this.campaigns.updateOne({ _id: campaign._id }, { $set: { audience } }).exec();
    await this.queuePlan(campaign);
  }

  private async queuePlan(campaign: Campaign): Promise<string> {
    const campaignId = String(campaign._id);
    const job = await this.email.enqueueBatchPlan(
      { kind: 'campaign', appId: campaign.appId, campaignId },
      { idempotencyKey: `campaign:${campaignId}:plan` },
    );
    await this.campaigns.updateOne({ _id: campaign._id }, { $set: { planJobId: job.id } }).exec();
    return job.id;
  }

  /**
   * One copy of a draft to `email`, subject marked as a test: to a user of this service, or within the
   * sender's small budget for other addresses (CampaignTestRecipients). It is the real message but for the
   * subject: every variable has a value (`sample`, else the app's first subscriber's names; `email` is the
   * recipient's own), its links and pixel are tracking URLs on the app's link domain (marked as a test's:
   * followed, never counted), with the recipient's unsubscribe link and the broadcast headers. It is queued
   * as transactional (suppression only, docs/decisions/campaigns-people-joinlist-unsubscribe.md) and stays
   * out of the statistics. Only a draft: once sent, its content is fixed and a copy proofs nothing.
   */
  async test(
    appId: string,
    id: string,
    email: string,
    userId: string,
    sample: SampleVariables = {},
  ): Promise<{ jobId: string }> {
    const campaign = await this.get(appId, id);
    if (campaign.status !== 'draft') throw new ConflictException(NOT_A_DRAFT_TEST);
    // Compiled (or found compiled) before anything is counted: a refused template costs no budget.
    const renderer = await rendererOf(campaign, true);
    await this.testRecipients.admit(userId, email);
    const contact = await this.contacts.findOrCreate(email);
    const base = await this.linkDomains.baseUrlOf(appId);
    const unsubscribeUrl = this.unsubscribeLinks.url(
      { contactId: String(contact._id), appId, ...(campaign.topic ? { topic: campaign.topic } : {}) },
      base,
    );
    const names = await this.sampleNames(appId, sample);
    const target = { campaignId: id, contactId: String(contact._id), appId, test: true };
    const rendered = await renderer.render(
      { ...names, email, unsubscribeUrl },
      {
        links: renderer.links.map((_, linkIndex) => this.tracking.clickUrl({ ...target, linkIndex }, base)),
        open: this.tracking.openUrl(target, base),
      },
    );
    const job = await this.email.enqueueEmail(
      {
        to: email,
        appId,
        subject: `[Test] ${rendered.subject}`,
        html: rendered.html,
        text: rendered.text,
        unsubscribeUrl,
        broadcastOf: id,
      },
      { priority: TEST_PRIORITY },
    );
    return { jobId: job.id };
  }

  /** The names a test copy shows: the ones given, else the app's first subscriber's. */
  private async sampleNames(
    appId: string,
    sample: SampleVariables,
  ): Promise<Pick<RecipientVariables, 'firstName' | 'lastName'>> {
    let first: { firstName: string | null; lastName: string | null } | undefined;
    if (sample.firstName === undefined || sample.lastName === undefined) {
      for await (const batch of this.contacts.audience(appId, null, 1)) {
        first = batch[0];
        break;
      }
    }
    return {
      firstName: sample.firstName ?? first?.firstName ?? null,
      lastName: sample.lastName ?? first?.lastName ?? null,
    };
  }

  /** 400 naming the field: the segment and the topic must be the app's. */
  private async checkAudience(
    appId: string,
    dto: { segmentId?: string | null; topic?: string | null },
  ): Promise<void> {
    if (dto.segmentId) await this.segments.requireSegment(appId, dto.segmentId, 'segmentId');
    if (dto.topic) await this.topics.requireTopic(appId, dto.topic, 'topic');
  }

  private async withTemplate(
    appId: string,
    dto: CreateCampaignDto,
  ): Promise<{
    name: string;
    subject: string;
    htmlContent: string;
    textContent: string | null;
    templateId: string | null;
  }> {
    let template = null;
    if (dto.templateId !== undefined) {
      template = await this.templates.findForApp(appId, dto.templateId);
      // A switched-off template is withdrawn from use: it seeds no new campaign.
      if (!template?.isActive)
        throw new BadRequestException('templateId: no active newsletter template with this id in this app');
    }
    const subject = dto.subject ?? template?.subject;
    const htmlContent = dto.htmlContent ?? template?.htmlContent;
    if (!subject) throw new BadRequestException('subject is required');
    if (!htmlContent) throw new BadRequestException('htmlContent is required');
    return {
      name: dto.name,
      subject,
      htmlContent,
      // The template's text goes with the template's HTML only.
      textContent:
        dto.textContent ?? (dto.htmlContent === undefined ? (template?.textContent ?? null) : null),
      templateId: dto.templateId ?? null,
    };
  }
}

/** The renderer of a campaign's content; a field over a limit or not compiling is a 400 naming it. */
async function rendererOf(content: CampaignContent, tracked: boolean): Promise<CampaignRenderer> {
  try {
    return await CampaignRenderer.create(content, tracked);
  } catch (error) {
    if (error instanceof TemplateProblem) throw new BadRequestException(error.message);
    throw error;
  }
}

async function assertCompiles(content: {
  subject?: string;
  htmlContent?: string;
  textContent?: string | null;
}): Promise<void> {
  const problem = await templateProblem(content);
  if (problem) throw new BadRequestException(problem);
}
