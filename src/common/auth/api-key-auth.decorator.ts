import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { ApiErrors } from '../swagger/envelope.decorators';
import { SECURITY } from '../swagger/openapi';
import { AUTH_POLICY, type AuthPolicy } from './auth-policy';
import { callerDecorator } from './caller';

/** The API key that authenticated a request: its record id and the app it belongs to. */
export interface ApiKeyPrincipal {
  id: string;
  appId: string;
}

export interface ApiKeyAuthOptions {
  /**
   * `optional`: the route also takes an app end user's token (`X-End-User-Token`, or `Authorization:
   * Bearer` unless that is a back-office token; from the magic-link sign-in) besides the key. When sent it
   * must be valid and of the path's app (401/403); the handler reads it from `request.endUser`.
   */
  endUser?: 'optional';
}

/**
 * A backend-to-backend route authenticated by a secret API key (`X-API-Key: sk_<appId>_…`), checked by the
 * `api-key` strategy (src/api-keys/api-key.strategy.ts). On a route with an `{appId}` path parameter the key
 * must belong to that app (else 403).
 */
export function ApiKeyAuth(options: ApiKeyAuthOptions = {}) {
  const policy: AuthPolicy = options.endUser
    ? { credential: 'api-key', endUser: options.endUser }
    : { credential: 'api-key' };
  // OpenAPI lists alternatives: the key alone, or the key and an end-user token. Both name the key first,
  // which is how the document passes tell one credential's alternatives from decorators that override.
  const security = options.endUser
    ? [ApiSecurity(SECURITY.apiKey), ApiSecurity({ [SECURITY.apiKey]: [], [SECURITY.endUser]: [] })]
    : [ApiSecurity(SECURITY.apiKey)];
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    ...security,
    ApiErrors(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN),
  );
}

/** `@CurrentApiKey() key: ApiKeyPrincipal` on an `@ApiKeyAuth()` route. */
export const CurrentApiKey = callerDecorator('api-key', 'CurrentApiKey');
