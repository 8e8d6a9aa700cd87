import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { EmailModule } from '../email/email.module';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';

@Module({ imports: [EmailModule, ChatModule], controllers: [HealthController], providers: [HealthService] })
export class HealthModule {}
