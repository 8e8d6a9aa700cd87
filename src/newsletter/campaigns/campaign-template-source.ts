import { Injectable } from '@nestjs/common';

/** The content a newsletter template gives a campaign created from it. */
export interface CampaignTemplate {
  subject: string;
  htmlContent: string;
  textContent?: string | null;
  isActive: boolean;
}

/** Newsletter templates of one app, as campaigns read them (`templateId` fills missing content). */
export interface CampaignTemplateSource {
  findForApp(appId: string, id: string): Promise<CampaignTemplate | null>;
}

export const CAMPAIGN_TEMPLATE_SOURCE = Symbol('CAMPAIGN_TEMPLATE_SOURCE');

/**
 * Stands in until the newsletter templates module is bound here (`useExisting: NewsletterTemplatesService`):
 * no template exists, so a `templateId` is answered with a 400.
 */
@Injectable()
export class NoCampaignTemplates implements CampaignTemplateSource {
  findForApp(): Promise<CampaignTemplate | null> {
    return Promise.resolve(null);
  }
}
