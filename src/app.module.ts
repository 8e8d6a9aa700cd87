import { Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AppsModule } from './apps/apps.module';
import { AuthModule } from './auth/auth.module';
import { AllExceptionsFilter } from './common/http/all-exceptions.filter';
import { createValidationPipe } from './common/validation/validation-pipe';
import { LoggingModule } from './common/logging/logging.module';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { EmailModule } from './email/email.module';
import { FeedbackModule } from './feedback/feedback.module';
import { HealthModule } from './health/health.module';
import { TicketsModule } from './tickets/tickets.module';
import { UsersModule } from './users/users.module';
import { WantsModule } from './wants/wants.module';

/** Requests per minute per client IP on routes without a tighter @Throttle. */
const DEFAULT_RATE_LIMIT = 600;

@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    DatabaseModule,
    // Domain events (new ticket, new want, …) for chat notifications; scheduled jobs (the e-mail worker).
    EventEmitterModule.forRoot(),
    ScheduleModule.forRoot(),
    ThrottlerModule.forRoot({ throttlers: [{ name: 'default', ttl: 60_000, limit: DEFAULT_RATE_LIMIT }] }),
    HealthModule,
    AuthModule,
    UsersModule,
    AppsModule,
    WantsModule,
    FeedbackModule,
    TicketsModule,
    ApiKeysModule,
    EmailModule,
  ],
  providers: [
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    {
      provide: APP_PIPE,
      useFactory: (): ValidationPipe => createValidationPipe(),
    },
    // Throttling runs first, so unauthenticated floods are limited too; the bearer guard comes from AuthModule.
    { provide: APP_GUARD, useClass: ThrottlerGuard },
  ],
})
export class AppModule {}
