import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import { findScoped, updateScoped } from '../../common/tenancy/scoped';
import { type CampaignContent, templateProblem } from '../campaigns/campaign-renderer';
import type { CreateNewsletterTemplateDto, UpdateNewsletterTemplateDto } from './dto/newsletter-template.dto';
import { NewsletterTemplate } from './schemas/newsletter-template.schema';

export const NEWSLETTER_TEMPLATE_NOT_FOUND = 'Newsletter template not found';

/** What a campaign takes from a template (`templateId` fills the content a campaign was created without). */
export interface NewsletterTemplateContent {
  subject: string;
  htmlContent: string;
  textContent?: string | null;
  isActive: boolean;
}

/** Newsletter templates of one app; another app's template answers like an unknown one (404). */
@Injectable()
export class NewsletterTemplatesService {
  constructor(
    @InjectModel(NewsletterTemplate.name) private readonly templates: Model<NewsletterTemplate>,
    private readonly apps: AppsService,
  ) {}

  list(appId: string): Promise<NewsletterTemplate[]> {
    return this.templates
      .find({ appId })
      .sort({ createdAt: -1, _id: -1 })
      .lean<NewsletterTemplate[]>()
      .exec();
  }

  async create(
    appId: string,
    dto: CreateNewsletterTemplateDto,
    createdBy: string,
  ): Promise<NewsletterTemplate> {
    await this.apps.requireApp(appId);
    await assertCompiles(dto);
    const created = await this.templates.create({ ...dto, appId, createdBy });
    return created.toObject<NewsletterTemplate>();
  }

  async update(appId: string, id: string, dto: UpdateNewsletterTemplateDto): Promise<NewsletterTemplate> {
    await assertCompiles(dto);
    return updateScoped(this.templates, appId, id, { ...dto }, NEWSLETTER_TEMPLATE_NOT_FOUND);
  }

  async remove(appId: string, id: string): Promise<void> {
    const template = await findScoped(this.templates, appId, id, NEWSLETTER_TEMPLATE_NOT_FOUND);
    const { deletedCount } = await this.templates.deleteOne({ _id: template._id, appId }).exec();
    if (!deletedCount) throw new NotFoundException(NEWSLETTER_TEMPLATE_NOT_FOUND);
  }

  /**
   * The content of the app's template `id` (active or not: the caller decides what an inactive one means),
   * or null for a malformed, unknown or other app's id. For the campaigns, which take `templateId`.
   */
  async findForApp(appId: string, id: string): Promise<NewsletterTemplateContent | null> {
    if (!isObjectIdOrHexString(id)) return null;
    return this.templates
      .findOne({ _id: id, appId }, { subject: 1, htmlContent: 1, textContent: 1, isActive: 1 })
      .lean<NewsletterTemplateContent>()
      .exec();
  }
}

/**
 * A template's content is a campaign's content to be: the same limits and compile rules
 * (campaign-renderer.ts), so a campaign created from it never fails on them. A 400 names the field.
 */
async function assertCompiles(content: Partial<CampaignContent>): Promise<void> {
  const problem = await templateProblem(content);
  if (problem) throw new BadRequestException(problem);
}
