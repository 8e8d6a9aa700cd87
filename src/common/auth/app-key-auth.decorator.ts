import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiHeader, ApiSecurity } from '@nestjs/swagger';
import { ApiErrors } from '../swagger/envelope.decorators';
import { SECURITY } from '../swagger/openapi';
import { AUTH_POLICY, type AuthPolicy } from './auth-policy';
import { callerDecorator } from './caller';

/**
 * A browser route authenticated by an app's publishable key (`X-App-Key`) plus an `Origin` listed in the
 * app's `allowedOrigins`, checked by the `app-key` strategy (src/apps/app-key.strategy.ts).
 * 401 missing/unknown key; 403 inactive app, missing or unlisted Origin, or another app than `{appId}`.
 */
export function AppKeyAuth() {
  const policy: AuthPolicy = { credential: 'app-key' };
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    ApiSecurity(SECURITY.appKey),
    ApiHeader({ name: 'Origin', required: true, description: "Must match one of the app's allowedOrigins" }),
    ApiErrors(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN),
  );
}

/** `@CurrentApp() app: App` on an `@AppKeyAuth()` route: the app record whose key was presented. */
export const CurrentApp = callerDecorator('app-key', 'CurrentApp');
