import { HttpStatus, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiErrorMessage } from '../common/swagger/envelope.decorators';
import { APP_NOT_FOUND, AppsService } from './apps.service';

/**
 * `@Param('appId', KnownApp)`: 404 `App not found` when no app has this id, for routes whose service would
 * otherwise just find nothing (lists, statistics, bulk deletes). One rule for an unknown app across the
 * API: creating routes check the app in their service; these check it here. An inactive app is known.
 */
@Injectable()
export class KnownApp implements PipeTransform<string, Promise<string>> {
  constructor(private readonly apps: AppsService) {}

  async transform(appId: string): Promise<string> {
    await this.apps.requireApp(appId);
    return appId;
  }
}

/** Documents the 404 of a route that checks its app (in its service or with `KnownApp`). */
export const ApiUnknownApp = () =>
  ApiErrorMessage(HttpStatus.NOT_FOUND, APP_NOT_FOUND, 'No app has this `appId`');
