import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../../apps/apps.module';
import { ContactsModule } from '../../contacts/contacts.module';
import { EmailModule } from '../../email/email.module';
import { CampaignComposer } from './campaign-composer';
import { CampaignHoldsListener } from './campaign-holds.listener';
import { CampaignPlanner } from './campaign-planner';
import { CampaignScheduler } from './campaign-scheduler';
import { SegmentsModule } from '../segments/segments.module';
import { CampaignTestRecipients } from './campaign-test-recipients';
import { CampaignProgress } from './campaign-progress';
import { NewsletterTemplatesModule } from '../templates/newsletter-templates.module';
import { NewsletterTemplatesService } from '../templates/newsletter-templates.service';
import { CAMPAIGN_TEMPLATE_SOURCE } from './campaign-template-source';
import { CampaignsController } from './campaigns.controller';
import { CampaignsService } from './campaigns.service';
import { Campaign, CampaignSchema } from './schemas/campaign.schema';
import { UsersModule } from '../../users/users.module';
import { SenderDomainsModule } from '../../sender-domains/sender-domains.module';

/**
 * Newsletter campaigns (docs/architecture.md "Campaigns"): the admin routes, the scheduler of scheduled
 * sends, the `campaign` batch planner (over the segments' member walk),
 * the `campaign` message composer and the link tables click tracking redirects to, all registered with the
 * e-mail engine at start-up.
 */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: Campaign.name, schema: CampaignSchema }]),
    AppsModule,
    ContactsModule,
    EmailModule,
    NewsletterTemplatesModule,
    SegmentsModule,
    UsersModule,
    SenderDomainsModule,
  ],
  controllers: [CampaignsController],
  providers: [
    CampaignsService,
    CampaignPlanner,
    CampaignComposer,
    CampaignHoldsListener,
    CampaignProgress,
    CampaignScheduler,
    CampaignTestRecipients,
    { provide: CAMPAIGN_TEMPLATE_SOURCE, useExisting: NewsletterTemplatesService },
  ],
})
export class CampaignsModule {}
