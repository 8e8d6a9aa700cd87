import { ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CredentialChecks } from '../common/auth/credential-checks';
import { EarlyRefusals } from '../common/auth/early-refusal';
import { originMatches } from '../common/auth/origin-match';
import { AppsService } from './apps.service';
import type { App } from './schemas/app.schema';

const PUBLIC_KEY_FORMAT = /^pk_[A-Za-z0-9_-]{1,128}$/;
const MISSING_KEY = 'Missing X-App-Key header';
const INVALID_KEY = 'Invalid app key';

function sentKey(request: FastifyRequest): string | null {
  const key = request.headers['x-app-key'];
  return typeof key === 'string' && key !== '' ? key : null;
}

/**
 * The publishable key of a browser client: `X-App-Key` names the app (401 when missing or unknown, 403 when
 * rotate-key replaced it), and the
 * request's `Origin` must match the app's `allowedOrigins` (403 when missing or not listed); an inactive
 * app is refused (403). On a route with an `{appId}` path parameter, the key must be that app's (403).
 */
@Injectable()
export class AppKeyStrategy {
  constructor(
    private readonly apps: AppsService,
    refusals: EarlyRefusals,
    checks: CredentialChecks,
  ) {
    checks.register('app-key', (request) => this.verify(request));
    refusals.register(
      'app-key',
      (request) => {
        const key = sentKey(request);
        if (key === null) return MISSING_KEY;
        return !PUBLIC_KEY_FORMAT.test(key) || apps.isKnownUnknownPublicKey(key) ? INVALID_KEY : null;
      },
      { readsCache: true },
    );
  }

  async verify(request: FastifyRequest): Promise<App> {
    const key = sentKey(request);
    if (key === null) throw new UnauthorizedException(MISSING_KEY);
    if (!PUBLIC_KEY_FORMAT.test(key)) throw new UnauthorizedException(INVALID_KEY);
    const app = await this.apps.publicKeyHolder(key);
    // A page still sending a replaced key learns why it stopped working (its owner must update it).
    if (app === 'retired') {
      throw new ForbiddenException('This app key was rotated; use the current publishable key');
    }
    if (!app) throw new UnauthorizedException(INVALID_KEY);
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
