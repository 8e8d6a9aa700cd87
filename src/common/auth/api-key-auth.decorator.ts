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

/**
 * A backend-to-backend route authenticated by a secret API key (`X-API-Key: sk_<appId>_…`), checked by the
 * `api-key` strategy (src/api-keys/api-key.strategy.ts). On a route with an `{appId}` path parameter the key
 * must belong to that app (else 403).
 */
export function ApiKeyAuth() {
  const policy: AuthPolicy = { credential: 'api-key' };
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    ApiSecurity(SECURITY.apiKey),
    ApiErrors(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN),
  );
}

/** `@CurrentApiKey() key: ApiKeyPrincipal` on an `@ApiKeyAuth()` route. */
export const CurrentApiKey = callerDecorator('api-key', 'CurrentApiKey');
