import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiErrors } from '../swagger/envelope.decorators';
import { SECURITY } from '../swagger/openapi';
import { AUTH_POLICY, AuthPolicy } from './auth-policy';
import { Access } from './roles';

/**
 * A bearer-token route with its role requirement: sets the guard policy and the Swagger security together.
 * Usable on a controller (default for its routes) or a handler (overrides the controller).
 */
export function Authenticated(access: Access) {
  const policy: AuthPolicy = { credential: 'bearer', access };
  const errors =
    access === Access.SignedIn ? [HttpStatus.UNAUTHORIZED] : [HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN];
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    ApiBearerAuth(SECURITY.bearer),
    ApiErrors(...errors),
  );
}
