import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ChatModule } from '../../chat/chat.module';
import { ContactsModule } from '../../contacts/contacts.module';
import { EmailModule } from '../email.module';
import { EmailJob, EmailJobSchema } from '../jobs/schemas/email-job.schema';
import { EmailEvent, EmailEventSchema } from '../tracking/schemas/email-event.schema';
import { BounceListener } from '../bounces/bounce-listener';
import { BounceReports } from './bounce-reports';
import { ComplaintGuard } from './complaint-guard';
import { EmailAnalyticsController } from './email-analytics.controller';
import { EmailAnalyticsService } from './email-analytics.service';
import { EmailEventsController } from './email-events.controller';
import { EmailEventsService } from './email-events.service';
import { ProviderEffects } from './provider-effects';
import { SoftBounceRule } from './soft-bounce-rule';
import { ProviderEventBatch } from './provider-event-batch';
import { ProviderWebhookController } from './provider-webhook.controller';
import { ProviderWebhookService } from './provider-webhook.service';
import { ANALYTICS_MODELS } from './schemas/analytics-models';
import { WebhookReceipt, WebhookReceiptSchema } from './schemas/analytics.schemas';

/**
 * Provider webhooks, the e-mail events views and the analytics (docs/architecture.md "Provider webhook",
 * "Analytics"). Events and counters are written by EmailModule's `EmailEventLedger` (the worker and tracking
 * write through it too); this module ingests provider events, acts on bounces and complaints (suppression,
 * the person's subscription, chat, the complaint guard) and serves the reads. A module of its own because
 * those effects need ContactsModule, which itself needs EmailModule.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: EmailEvent.name, schema: EmailEventSchema },
      { name: WebhookReceipt.name, schema: WebhookReceiptSchema },
      // Read only: whether mail was queued under a campaign id that has no counters yet.
      { name: EmailJob.name, schema: EmailJobSchema },
      ...ANALYTICS_MODELS,
    ]),
    EmailModule,
    ContactsModule,
    ChatModule,
  ],
  controllers: [ProviderWebhookController, EmailEventsController, EmailAnalyticsController],
  providers: [
    ProviderWebhookService,
    ProviderEventBatch,
    ProviderEffects,
    BounceReports,
    BounceListener,
    SoftBounceRule,
    ComplaintGuard,
    EmailEventsService,
    EmailAnalyticsService,
  ],
})
export class EmailEventsModule {}
