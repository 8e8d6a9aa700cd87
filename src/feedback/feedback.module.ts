import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../apps/apps.module';
import { FeedbackAdminController } from './feedback-admin.controller';
import { FeedbackErasureListener } from './feedback-erasure.listener';
import { FeedbackPublicController } from './feedback-public.controller';
import { FeedbackService } from './feedback.service';
import { Feedback, FeedbackSchema } from './schemas/feedback.schema';

@Module({
  imports: [MongooseModule.forFeature([{ name: Feedback.name, schema: FeedbackSchema }]), AppsModule],
  controllers: [FeedbackPublicController, FeedbackAdminController],
  providers: [FeedbackService, FeedbackErasureListener],
})
export class FeedbackModule {}
