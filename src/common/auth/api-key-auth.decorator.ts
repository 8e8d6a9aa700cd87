import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  HttpStatus,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiKeyGuard } from '../../api-keys/api-key.guard';
import { ApiErrors } from '../swagger/envelope.decorators';
import { SECURITY } from '../swagger/openapi';
import { AUTH_POLICY, AuthPolicy } from './auth-policy';

/** The API key that authenticated a request: its record id and the app it belongs to. */
export interface ApiKeyPrincipal {
  id: string;
  appId: string;
}

export type ApiKeyRequest = FastifyRequest & { apiKey?: ApiKeyPrincipal };

/**
 * A backend-to-backend route authenticated by a secret API key (`X-API-Key: sk_<appId>_…`). On a route
 * with an `{appId}` path parameter the key must belong to that app (else 403). The guard needs
 * `ApiKeysService`, which the global ApiKeysModule provides everywhere: no import needed.
 */
export function ApiKeyAuth() {
  const policy: AuthPolicy = { credential: 'api-key' };
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    UseGuards(ApiKeyGuard),
    ApiSecurity(SECURITY.apiKey),
    ApiErrors(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN),
  );
}

/** The API key of the request (set by the `@ApiKeyAuth()` guard). */
export const CurrentApiKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiKeyPrincipal => {
    const apiKey = context.switchToHttp().getRequest<ApiKeyRequest>().apiKey;
    if (!apiKey) throw new Error('CurrentApiKey used on a route without @ApiKeyAuth()');
    return apiKey;
  },
);
