import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { App } from './schemas/app.schema';

/** App records. Other modules use `requireApp` / `requireActiveApp` to check the `{appId}` of a path. */
@Injectable()
export class AppsService {
  constructor(@InjectModel(App.name) private readonly apps: Model<App>) {}

  findByAppId(appId: string): Promise<App | null> {
    return this.apps.findOne({ id: appId }).lean<App>().exec();
  }

  /** The app, or 404 when no app has this id. */
  async requireApp(appId: string): Promise<App> {
    const app = await this.findByAppId(appId);
    if (!app) throw new NotFoundException('App not found');
    return app;
  }

  /** The app, or 404 when it does not exist or is inactive (public endpoints do not reveal which). */
  async requireActiveApp(appId: string): Promise<App> {
    const app = await this.findByAppId(appId);
    if (!app || !app.active) throw new NotFoundException('App not found');
    return app;
  }
}
