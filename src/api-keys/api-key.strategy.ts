import { ForbiddenException, Injectable, Logger, UnauthorizedException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyPrincipal } from '../common/auth/api-key-auth.decorator';
import { CredentialChecks } from '../common/auth/credential-checks';
import { EarlyRefusals } from '../common/auth/early-refusal';
import { originMatches } from '../common/auth/origin-match';
import { ApiKeysService } from './api-keys.service';

const MISSING_KEY = 'Missing X-API-Key header';
const INVALID_KEY = 'Invalid API key';

function sentKey(request: FastifyRequest): string | null {
  const value = request.headers['x-api-key'];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The secret key of a client backend (`X-API-Key`). 401 when missing or unknown; 403 when revoked, expired,
 * of an inactive (or deleted) app, of another app than the path's `{appId}`, or sent with an `Origin` that
 * the key's `allowedOrigins` (when it has any) do not list. A request without `Origin` (server to server) is
 * not refused for it: browsers always send one, and only browsers are what an origin list can restrain.
 */
@Injectable()
export class ApiKeyStrategy {
  private readonly logger = new Logger(ApiKeyStrategy.name);

  constructor(
    private readonly keys: ApiKeysService,
    refusals: EarlyRefusals,
    checks: CredentialChecks,
  ) {
    checks.register('api-key', (request) => this.verify(request));
    refusals.register(
      'api-key',
      (request) => {
        const value = sentKey(request);
        if (value === null) return MISSING_KEY;
        return keys.isKnownUnknown(value) ? INVALID_KEY : null;
      },
      { readsCache: true },
    );
  }

  async verify(request: FastifyRequest): Promise<ApiKeyPrincipal> {
    const value = sentKey(request);
    if (value === null) throw new UnauthorizedException(MISSING_KEY);
    // The key and its app in one command: a revoked key or a switched-off app fails the next request.
    const key = await this.keys.findCredential(value);
    if (!key) throw new UnauthorizedException(INVALID_KEY);
    const app = key.app;

    const pathAppId = (request.params as Record<string, string> | undefined)?.appId;
    if (pathAppId !== undefined && pathAppId !== key.appId) {
      throw new ForbiddenException('This API key belongs to another app');
    }
    if (!key.isActive) throw new ForbiddenException('This API key has been revoked');
    const now = new Date();
    if (key.expiresAt && key.expiresAt <= now) throw new ForbiddenException('This API key has expired');
    // A switched-off (or deleted) app's clients are all refused at once: its keys stay, but do not work.
    if (app?.id !== key.appId || !app.active) throw new ForbiddenException('This app is inactive');
    const origin = request.headers.origin;
    if (key.allowedOrigins?.length && origin !== undefined && !originMatches(origin, key.allowedOrigins)) {
      throw new ForbiddenException('Origin not allowed for this API key');
    }

    // Bookkeeping must not fail the request it describes; a failure is logged.
    await this.keys.touchLastUsed(key, now).catch((err: unknown) => {
      this.logger.error({ err, apiKeyId: String(key._id) }, 'Could not record API key use');
    });
    return { id: String(key._id), appId: key.appId };
  }
}
