import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  HttpStatus,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { ApiHeader, ApiSecurity } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AppKeyGuard } from '../../apps/app-key.guard';
import type { App } from '../../apps/schemas/app.schema';
import { ApiErrors } from '../swagger/envelope.decorators';
import { SECURITY } from '../swagger/openapi';
import { AUTH_POLICY, AuthPolicy } from './auth-policy';

/** `clientApp`, not `app`: the request object's own names stay untouched. */
export type AppKeyRequest = FastifyRequest & { clientApp?: App };

/**
 * A browser route authenticated by an app's publishable key (`X-App-Key`) plus an `Origin` listed in the
 * app's `allowedOrigins`. 401 missing/unknown key; 403 inactive app, missing or unlisted Origin.
 * The guard needs `AppsService`, which the global AppsModule provides everywhere.
 */
export function AppKeyAuth() {
  const policy: AuthPolicy = { credential: 'app-key' };
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    UseGuards(AppKeyGuard),
    ApiSecurity(SECURITY.appKey),
    ApiHeader({ name: 'Origin', required: true, description: "Must match one of the app's allowedOrigins" }),
    ApiErrors(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN),
  );
}

/** The app whose publishable key authenticated the request. */
export const CurrentApp = createParamDecorator((_data: unknown, context: ExecutionContext): App => {
  const app = context.switchToHttp().getRequest<AppKeyRequest>().clientApp;
  if (!app) throw new Error('CurrentApp used on a route without @AppKeyAuth()');
  return app;
});
