import { ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';
import { bearerToken } from '../../common/auth/bearer-token';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import { SecretKeys } from '../../config/secret-keys';
import { TOKEN_ISSUER } from '../jwt-options';
import { END_USER_AUDIENCE, type EndUserClaims } from './end-user-token.service';

/** The part of the request this strategy reads besides the token. */
interface EndUserRequest {
  params?: Record<string, string | undefined>;
}

/**
 * An app end user's bearer token: HS256 with the end-user key, issuer and audience `end-user` pinned, and an
 * `appId` claim. On a route with an `{appId}` path parameter the token must have been issued for that app.
 */
@Injectable()
export class EndUserStrategy extends PassportStrategy(Strategy, 'end-user') {
  constructor(keys: SecretKeys) {
    super({
      jwtFromRequest: bearerToken,
      // A KeyObject (see SecretKeys); the typings list only string | Buffer, jsonwebtoken takes it as is.
      secretOrKey: keys.endUserJwt as unknown as Buffer,
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: END_USER_AUDIENCE,
      passReqToCallback: true,
    });
  }

  validate(request: EndUserRequest, claims: Partial<EndUserClaims & { exp: number }>): EndUserPrincipal {
    const { sub, email, appId, exp } = claims;
    // jsonwebtoken checks `exp` only when present; a token without one would never expire.
    const wellFormed = typeof sub === 'string' && typeof email === 'string' && typeof appId === 'string';
    if (!wellFormed || typeof exp !== 'number') {
      throw new UnauthorizedException('Invalid or expired token');
    }
    const pathAppId = request.params?.appId;
    if (pathAppId !== undefined && pathAppId !== appId) {
      throw new ForbiddenException('This token belongs to another app');
    }
    return { id: sub, email, appId };
  }
}
