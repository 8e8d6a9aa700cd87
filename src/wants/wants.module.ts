import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../apps/apps.module';
import { WantVote, WantVoteSchema } from './schemas/want-vote.schema';
import { Want, WantSchema } from './schemas/want.schema';
import { WantErasureListener } from './want-erasure.listener';
import { WantsAdminController } from './wants-admin.controller';
import { WantsPublicController } from './wants-public.controller';
import { WantsService } from './wants.service';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: Want.name, schema: WantSchema },
      { name: WantVote.name, schema: WantVoteSchema },
    ]),
    AppsModule,
  ],
  controllers: [WantsPublicController, WantsAdminController],
  providers: [WantsService, WantErasureListener],
})
export class WantsModule {}
