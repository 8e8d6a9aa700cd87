import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { ConfigService } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AppsModule } from './apps/apps.module';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { MagicLinkModule } from './auth/magic-link/magic-link.module';
import { ChatModule } from './chat/chat.module';
import { CredentialGuard } from './common/auth/credential.guard';
import { CredentialsModule } from './common/credentials/credentials.module';
import { CryptoModule } from './common/crypto/crypto.module';
import { AllExceptionsFilter } from './common/http/all-exceptions.filter';
import { DirectRoutesModule } from './common/http/direct-routes';
import { ClientThrottlerGuard, throttlerOptions } from './common/http/rate-limit';
import { createValidationPipe } from './common/validation/validation-pipe';
import { LoggingModule } from './common/logging/logging.module';
import { AppConfigModule } from './config/config.module';
import { ContactsModule } from './contacts/contacts.module';
import { type DatabaseOptions, DatabaseModule } from './database/database.module';
import { EmailModule } from './email/email.module';
import { EmailEventsModule } from './email/events/email-events.module';
import { FeedbackModule } from './feedback/feedback.module';
import { HealthModule } from './health/health.module';
import { NewsletterModule } from './newsletter/newsletter.module';
import { QueueModule } from './queue/queue.module';
import { CampaignsModule } from './newsletter/campaigns/campaigns.module';
import { TicketsModule } from './tickets/tickets.module';
import { UsersModule } from './users/users.module';
import { WantsModule } from './wants/wants.module';

@Module({
  imports: [
    LoggingModule,
    // Domain events (new ticket, new want, …) for chat notifications; scheduled jobs (the e-mail worker).
    EventEmitterModule.forRoot(),
    ScheduleModule.forRoot(),
    // The lease-queue engine's handler registry (background work of every kind).
    QueueModule,
    ThrottlerModule.forRootAsync({ inject: [ConfigService], useFactory: throttlerOptions }),
    CryptoModule,
    CredentialsModule,
    // Staff actions' audit trail: its interceptor wraps every audited route (src/audit/audit-actions.ts).
    AuditModule,
    DirectRoutesModule,
    HealthModule,
    AuthModule,
    UsersModule,
    AppsModule,
    WantsModule,
    FeedbackModule,
    TicketsModule,
    ApiKeysModule,
    EmailModule,
    EmailEventsModule,
    ContactsModule,
    MagicLinkModule,
    ChatModule,
    NewsletterModule,
    CampaignsModule,
  ],
  providers: [
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
    // Global guards run in this order: throttling first, so unauthenticated floods are limited too.
    { provide: APP_GUARD, useClass: ClientThrottlerGuard },
    { provide: APP_GUARD, useClass: CredentialGuard },
  ],
})
export class AppModule {
  /**
   * The application with its configuration. Loading and validating the environment happens here, when the
   * application is assembled (main.ts, worker.ts, each test), not when this file is imported.
   */
  static async forRoot(database: DatabaseOptions = { embedded: true }): Promise<DynamicModule> {
    return {
      module: AppModule,
      imports: [await AppConfigModule.forRoot(), DatabaseModule.forRoot(database)],
    };
  }
}
