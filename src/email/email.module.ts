import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/env';
import { mailTransportProvider } from './delivery/mail-transport.provider';
import { EMAIL_TEMPLATE_SOURCE } from './delivery/template-source';
import { EmailService } from './email.service';
import { AnalyticsCounters } from './events/analytics-counters';
import { CampaignCountersRebuild } from './events/campaign-counters-rebuild';
import { EmailEventLedger } from './events/email-event-ledger';
import { EventRetention } from './events/event-retention';
import { ForgedSignatureBudget } from './events/forged-signature-budget';
import { ANALYTICS_MODELS } from './events/schemas/analytics-models';
import { SentEvents } from './events/sent-events';
import { SNS_ENDPOINT_RULE, snsEndpointRule } from './events/providers/sns-endpoints';
import { WebhookToken, WebhookTokenSchema } from './events/schemas/webhook-token.schema';
import { WebhookSignatureStrategy } from './events/webhook-signature.strategy';
import { CampaignHolds } from './jobs/campaign-holds';
import { SentMessageLookup } from './jobs/sent-message-lookup';
import { CampaignHold, CampaignHoldSchema } from './jobs/schemas/campaign-hold.schema';
import { BatchPlanHandler } from './jobs/batch-plan.handler';
import { EmailJobStore } from './jobs/email-job.store';
import { EmailJobsController } from './jobs/email-jobs.controller';
import { EmailJobsService } from './jobs/email-jobs.service';
import { EmailQueueStatus } from './jobs/email-queue-status';
import { EmailWorker } from './jobs/email-worker';
import { JobRetention } from './jobs/job-retention';
import { JobSecrets } from './jobs/job-secrets';
import { MessageLedger } from './jobs/message-ledger';
import { MessageLedgerEntry, MessageLedgerSchema } from './jobs/schemas/message-ledger.schema';
import { EMAIL_KIND } from './jobs/email-kind';
import { QueueModule } from '../queue/queue.module';
import { SendEmailHandler } from './jobs/send-email.handler';
import { RecipientJobsService } from './jobs/recipient-jobs.service';
import { Suppression, SuppressionSchema } from './suppression/schemas/suppression.schema';
import { SuppressionService } from './suppression/suppression.service';
import { VerpAddresses } from './bounces/verp';
import { SenderDomainsModule } from '../sender-domains/sender-domains.module';
import { EmailTemplatesModule } from './templates/email-templates.module';
import { EmailTemplatesService } from './templates/email-templates.service';
import { ClickTargets } from './tracking/click-targets';
import { ContactEmailEvents } from './tracking/contact-email-events';
import { EmailEvent, EmailEventSchema } from './tracking/schemas/email-event.schema';
import { OpenPixelRoute } from './tracking/open-pixel.route';
import { TrackingController } from './tracking/tracking.controller';
import { TrackingEvents } from './tracking/tracking-events';
import { TrackingLinks } from './tracking/tracking-links';
import { ReplayWindow } from './tracking/replay-window';
import { TrackedMessage, TrackedMessageSchema } from './tracking/schemas/tracked-message.schema';
import { TrackedMessages } from './tracking/tracked-messages';
import { DEFAULT_TRACKING_LIMITS, TRACKING_LIMITS } from './tracking/tracking-limits';

/**
 * The e-mail engine: templates, the job queue and its worker, delivery, suppression. Other modules use
 * `EmailService` (enqueue, release a held campaign), `SuppressionService`, `JobSecrets` (the sealed secrets
 * of a message composed when it is sent), `RecipientJobsService` (a person's jobs, for export and GDPR
 * erasure), `VerpAddresses` (the bounce listener), for campaign mail `TrackingLinks`, for the health probe
 * `EmailQueueStatus`; they add batch planners, message composers and link tables by marking their own
 * methods (src/email/jobs/email-handlers.ts). The e-mail events module (src/email/events/) writes through
 * `EmailEventLedger` and holds campaigns with `CampaignHolds`. Nothing else.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: MessageLedgerEntry.name, schema: MessageLedgerSchema },
      { name: Suppression.name, schema: SuppressionSchema },
      { name: EmailEvent.name, schema: EmailEventSchema },
      { name: CampaignHold.name, schema: CampaignHoldSchema },
      { name: TrackedMessage.name, schema: TrackedMessageSchema },
      { name: WebhookToken.name, schema: WebhookTokenSchema },
      ...ANALYTICS_MODELS,
    ]),
    QueueModule.forKind(EMAIL_KIND, { ownStore: true, ownWorker: true }),
    EmailTemplatesModule,
    SenderDomainsModule,
  ],
  controllers: [EmailJobsController, TrackingController],
  providers: [
    EmailService,
    ContactEmailEvents,
    EmailJobStore,
    EmailJobsService,
    EmailWorker,
    EmailQueueStatus,
    JobRetention,
    JobSecrets,
    MessageLedger,
    SendEmailHandler,
    BatchPlanHandler,
    RecipientJobsService,
    SuppressionService,
    VerpAddresses,
    WebhookSignatureStrategy,
    ForgedSignatureBudget,
    {
      provide: SNS_ENDPOINT_RULE,
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) =>
        snsEndpointRule(
          config.get('SNS_TEST_ENDPOINT', { infer: true }),
          config.get('SNS_TEST_CA_FILE', { infer: true }),
        ),
    },
    TrackingLinks,
    ClickTargets,
    TrackingEvents,
    ReplayWindow,
    TrackedMessages,
    { provide: TRACKING_LIMITS, useValue: DEFAULT_TRACKING_LIMITS },
    OpenPixelRoute,
    AnalyticsCounters,
    CampaignCountersRebuild,
    EmailEventLedger,
    EventRetention,
    SentEvents,
    CampaignHolds,
    SentMessageLookup,
    mailTransportProvider,
    { provide: EMAIL_TEMPLATE_SOURCE, useExisting: EmailTemplatesService },
  ],
  exports: [
    EmailService,
    EmailQueueStatus,
    SuppressionService,
    VerpAddresses,
    JobSecrets,
    RecipientJobsService,
    ContactEmailEvents,
    EmailTemplatesModule,
    TrackingLinks,
    EmailEventLedger,
    CampaignHolds,
    SentMessageLookup,
  ],
})
export class EmailModule {}
