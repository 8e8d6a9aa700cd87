import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../../apps/apps.module';
import { ContactsModule } from '../../contacts/contacts.module';
import { EmailModule } from '../../email/email.module';
import { Campaign, CampaignSchema } from '../campaigns/schemas/campaign.schema';
import { Segment, SegmentSchema } from './schemas/segment.schema';
import { SegmentMembers } from './segment-members';
import { SegmentsController } from './segments.controller';
import { SegmentsService } from './segments.service';

/** Segments (docs/api/newsletters.md "Segments"): the admin routes, and the member walk plans use. */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: Segment.name, schema: SegmentSchema },
      { name: Campaign.name, schema: CampaignSchema },
    ]),
    AppsModule,
    ContactsModule,
    EmailModule,
  ],
  controllers: [SegmentsController],
  providers: [SegmentsService, SegmentMembers],
  exports: [SegmentsService, SegmentMembers],
})
export class SegmentsModule {}
