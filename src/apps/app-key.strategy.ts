import { ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { originMatches } from '../common/auth/origin-match';
import { AppsService } from './apps.service';
import type { App } from './schemas/app.schema';

const PUBLIC_KEY_FORMAT = /^pk_[A-Za-z0-9_-]{1,128}$/;

/**
 * The publishable key of a browser client: `X-App-Key` names the app (401 when missing or unknown, 403 when
 * rotate-key replaced it), and the
 * request's `Origin` must match the app's `allowedOrigins` (403 when missing or not listed); an inactive
 * app is refused (403). On a route with an `{appId}` path parameter, the key must be that app's (403).
 */
@Injectable()
export class AppKeyStrategy extends PassportStrategy(Strategy, 'app-key') {
  constructor(private readonly apps: AppsService) {
    super();
  }

  async validate(request: FastifyRequest): Promise<App> {
    const key = request.headers['x-app-key'];
    if (typeof key !== 'string' || key === '') throw new UnauthorizedException('Missing X-App-Key header');
    if (!PUBLIC_KEY_FORMAT.test(key)) throw new UnauthorizedException('Invalid app key');
    const app = await this.apps.publicKeyHolder(key);
    // A page still sending a replaced key learns why it stopped working (its owner must update it).
    if (app === 'retired') {
      throw new ForbiddenException('This app key was rotated; use the current publishable key');
    }
    if (!app) throw new UnauthorizedException('Invalid app key');
    if (!app.active) throw new ForbiddenException('This app is inactive');

    const pathAppId = (request.params as Record<string, string> | undefined)?.appId;
    if (pathAppId !== undefined && pathAppId !== app.id) {
      throw new ForbiddenException('This app key belongs to another app');
    }
    const origin = request.headers.origin;
    if (!origin) throw new ForbiddenException('Missing Origin header');
    if (!originMatches(origin, app.allowedOrigins ?? [])) {
      throw new ForbiddenException('Origin not allowed for this app');
    }
    return app;
  }
}
