import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ConfigService } from '@nestjs/config';
import { mailTransportProvider } from './delivery/mail-transport.provider';
import { EMAIL_TEMPLATE_SOURCE } from './delivery/template-source';
import { EmailService } from './email.service';
import { WebhookSignatureStrategy } from './events/webhook-signature.strategy';
import { BatchPlanners } from './jobs/batch-planners';
import { EmailJobStore } from './jobs/email-job.store';
import { EmailJobsController } from './jobs/email-jobs.controller';
import { EmailJobsService } from './jobs/email-jobs.service';
import { EmailWorker } from './jobs/email-worker';
import { EmailJob, EmailJobSchema } from './jobs/schemas/email-job.schema';
import { SendEmailHandler } from './jobs/send-email.handler';
import { RecipientJobsService } from './jobs/recipient-jobs.service';
import { EMAIL_WORKER_OPTIONS, workerOptionsFromConfig } from './jobs/worker-options';
import { Suppression, SuppressionSchema } from './suppression/schemas/suppression.schema';
import { SuppressionService } from './suppression/suppression.service';
import { EmailTemplatesModule } from './templates/email-templates.module';
import { EmailTemplatesService } from './templates/email-templates.service';

/**
 * The e-mail engine: templates, the job queue and its worker, delivery, suppression. Other modules use
 * `EmailService` (enqueue), `SuppressionService`, `BatchPlanners` and `RecipientJobsService` (a person's
 * jobs, for export and GDPR erasure), nothing else.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: EmailJob.name, schema: EmailJobSchema },
      { name: Suppression.name, schema: SuppressionSchema },
    ]),
    EmailTemplatesModule,
  ],
  controllers: [EmailJobsController],
  providers: [
    EmailService,
    EmailJobStore,
    EmailJobsService,
    EmailWorker,
    SendEmailHandler,
    BatchPlanners,
    RecipientJobsService,
    SuppressionService,
    WebhookSignatureStrategy,
    mailTransportProvider,
    { provide: EMAIL_TEMPLATE_SOURCE, useExisting: EmailTemplatesService },
    { provide: EMAIL_WORKER_OPTIONS, inject: [ConfigService], useFactory: workerOptionsFromConfig },
  ],
  exports: [EmailService, SuppressionService, BatchPlanners, RecipientJobsService, EmailTemplatesModule],
})
export class EmailModule {}
