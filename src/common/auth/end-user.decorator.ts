import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { ApiErrors } from '../swagger/envelope.decorators';
import { SECURITY } from '../swagger/openapi';
import { AUTH_POLICY, type AuthPolicy } from './auth-policy';
import { callerDecorator } from './caller';

/**
 * An end user of a client app, signed in by magic link: the person's record id and the app the token was
 * issued for (the token carries no address).
 */
export interface EndUserPrincipal {
  id: string;
  appId: string;
}

/**
 * A route for an app's end users: a token with audience `end-user` in `X-End-User-Token` (or `Authorization:
 * Bearer`; never a back-office token, and a back-office route never takes this one), checked by the
 * `end-user` strategy (src/auth/end-user/end-user.strategy.ts). On a route with an `{appId}` the token must
 * be that app's (403).
 */
export function EndUser() {
  const policy: AuthPolicy = { credential: 'end-user' };
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    ApiSecurity(SECURITY.endUser),
    ApiErrors(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN),
  );
}

/** `@CurrentEndUser() user: EndUserPrincipal` on an `@EndUser()` route. */
export const CurrentEndUser = callerDecorator('end-user', 'CurrentEndUser');
