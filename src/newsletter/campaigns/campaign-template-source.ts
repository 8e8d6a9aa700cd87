/** The content a newsletter template gives a campaign created from it. */
export interface CampaignTemplate {
  subject: string;
  htmlContent: string;
  textContent?: string | null;
  isActive: boolean;
}

/**
 * Newsletter templates of one app, as campaigns read them (`templateId` fills missing content); bound to
 * NewsletterTemplatesService in CampaignsModule.
 */
export interface CampaignTemplateSource {
  findForApp(appId: string, id: string): Promise<CampaignTemplate | null>;
}

export const CAMPAIGN_TEMPLATE_SOURCE = Symbol('CAMPAIGN_TEMPLATE_SOURCE');
