import { Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AdminAppsController } from './admin-apps.controller';
import { AppKeyGuard } from './app-key.guard';
import { AppsController } from './apps.controller';
import { AppsService } from './apps.service';
import { App, AppSchema } from './schemas/app.schema';

/**
 * Global: every tenant module checks its `{appId}` through AppsService, and `@AppKeyAuth()` routes
 * instantiate AppKeyGuard in their own module, so both resolve without extra imports.
 */
@Global()
@Module({
  imports: [MongooseModule.forFeature([{ name: App.name, schema: AppSchema }])],
  controllers: [AppsController, AdminAppsController],
  providers: [AppsService, AppKeyGuard],
  exports: [AppsService, AppKeyGuard],
})
export class AppsModule {}
