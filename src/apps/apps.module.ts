import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SenderDomainsModule } from '../sender-domains/sender-domains.module';
import { AdminAppsController } from './admin-apps.controller';
import { AppKeyStrategy } from './app-key.strategy';
import { AppsController } from './apps.controller';
import { AppsService } from './apps.service';
import { App, AppSchema } from './schemas/app.schema';

/**
 * App records. Tenant modules import it to check the `{appId}` of a path through AppsService; the `app-key`
 * strategy whose check `@AppKeyAuth()` routes run registers here.
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: App.name, schema: AppSchema }]), SenderDomainsModule],
  controllers: [AppsController, AdminAppsController],
  providers: [AppsService, AppKeyStrategy],
  exports: [AppsService],
})
export class AppsModule {}
