import { BadRequestException, ConflictException, Inject, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import type { Pagination } from '../../common/http/envelope';
import { findPage } from '../../common/pagination/pagination';
import { findScoped } from '../../common/tenancy/scoped';
import { EmailService } from '../../email/email.service';
import { CAMPAIGN_TEMPLATE_SOURCE, type CampaignTemplateSource } from './campaign-template-source';
import { ContactsService } from '../../contacts/contacts.service';
import { UnsubscribeLinks } from '../../contacts/unsubscribe/unsubscribe-links';
import { TemplateProblem } from '../../email/templates/template-limits';
import { type CampaignContent, CampaignRenderer, templateProblem } from './campaign-renderer';
import { CampaignTestRecipients } from './campaign-test-recipients';
import type { CreateCampaignDto, ListCampaignsQuery, UpdateCampaignDto } from './dto/campaign.dto';
import { Campaign } from './schemas/campaign.schema';

const NOT_FOUND = 'Campaign not found';
export const NOT_A_DRAFT = 'Only a draft campaign can be changed, deleted or sent';
export const ALREADY_SENT = 'The campaign has been sent already';
export const NOT_A_DRAFT_TEST = 'Only a draft campaign can be sent as a test';
/** Test copies go before campaign mail in the queue (transactional). */
const TEST_PRIORITY = 10;

/**
 * Campaigns of one app (docs/architecture.md "Campaigns"): drafts are edited freely; sending fixes the
 * content's link table and hands the campaign to a batch plan (`CampaignPlanner`) that queues one message per
 * recipient. Statistics and completion are `CampaignProgress`'s, recounted from the queue.
 */
@Injectable()
export class CampaignsService {
  constructor(
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly apps: AppsService,
    private readonly email: EmailService,
    @Inject(CAMPAIGN_TEMPLATE_SOURCE) private readonly templates: CampaignTemplateSource,
    private readonly testRecipients: CampaignTestRecipients,
    private readonly contacts: ContactsService,
    private readonly unsubscribeLinks: UnsubscribeLinks,
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
    const created = await this.campaigns.create({ ...content, appId, createdBy, status: 'draft' });
    return created.toObject<Campaign>();
  }

  async get(appId: string, id: string): Promise<Campaign> {
    await this.apps.requireApp(appId);
    return findScoped(this.campaigns, appId, id, NOT_FOUND);
  }

  async update(appId: string, id: string, dto: UpdateCampaignDto): Promise<Campaign> {
    await this.get(appId, id);
    await assertCompiles(dto);
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
    await this.get(appId, id);
    const result = await this.campaigns.deleteOne({ _id: id, appId, status: 'draft' }).exec();
    if (result.deletedCount === 0) throw new ConflictException(NOT_A_DRAFT);
  }

  /**
   * `draft` → `sending` in one conditional update (of two concurrent sends, one wins; the other is a 409),
   * which also fixes the link table; then the plan job is queued. Should queuing fail, the campaign goes
   * back to `draft` so it can be sent again.
   */
  async send(appId: string, id: string): Promise<{ status: 'sending'; jobId: string }> {
    const draft = await this.get(appId, id);
    // Content saved before the template limits existed is checked here, before anything is queued.
    const { links } = await rendererOf(draft, true);
    const sending = await this.campaigns
      .findOneAndUpdate(
        { _id: draft._id, appId, status: 'draft' },
        {
          $set: {
            status: 'sending',
            sentAt: new Date(),
            links,
            stats: { total: 0, sent: 0, failed: 0 },
            planCursor: null,
            planned: false,
          },
        },
        { returnDocument: 'after' },
      )
      .lean<Campaign>()
      .exec();
    if (!sending) throw new ConflictException(ALREADY_SENT);
    const campaignId = String(draft._id);
    try {
      const job = await this.email.enqueueBatchPlan(
        { kind: 'campaign', appId, campaignId },
        { idempotencyKey: `campaign:${campaignId}:plan` },
      );
      await this.campaigns.updateOne({ _id: draft._id }, { $set: { planJobId: job.id } }).exec();
      return { status: 'sending', jobId: job.id };
    } catch (error) {
      await this.campaigns
        .updateOne({ _id: draft._id, status: 'sending' }, { $set: { status: 'draft', sentAt: null } })
        .exec();
      throw error;
    }
  }

  /**
   * One copy of a draft to `email`, subject marked as a test: to a user of this service, or within the
   * sender's small budget for other addresses (CampaignTestRecipients). Sent like a campaign message (the
   * recipient's unsubscribe link in `{{unsubscribeUrl}}` and in the `List-Unsubscribe` headers) but
   * transactional (suppression only, docs/decisions/campaigns-people-joinlist-unsubscribe.md), without
   * tracking, and not in the statistics. Only a draft: once sent, its content is fixed and a copy proofs
   * nothing.
   */
  async test(appId: string, id: string, email: string, userId: string): Promise<{ jobId: string }> {
    const campaign = await this.get(appId, id);
    if (campaign.status !== 'draft') throw new ConflictException(NOT_A_DRAFT_TEST);
    // Compiled (or found compiled) before anything is counted: a refused template costs no budget.
    const renderer = await rendererOf(campaign, false);
    await this.testRecipients.admit(userId, email);
    const contact = await this.contacts.findOrCreate(email);
    const unsubscribeUrl = this.unsubscribeLinks.url({ contactId: String(contact._id), appId });
    const rendered = await renderer.render({ firstName: null, lastName: null, email, unsubscribeUrl });
    const job = await this.email.enqueueEmail(
      {
        to: email,
        appId,
        subject: `[Test] ${rendered.subject}`,
        html: rendered.html,
        text: rendered.text,
        unsubscribeUrl,
      },
      { priority: TEST_PRIORITY },
    );
    return { jobId: job.id };
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
