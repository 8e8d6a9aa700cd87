import { ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';
import { endUserToken } from '../../common/auth/end-user-token';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import { SecretKeys } from '../../config/secret-keys';
import { ContactsService } from '../../contacts/contacts.service';
import { TOKEN_ISSUER } from '../jwt-options';
import { END_USER_AUDIENCE, type EndUserClaims } from './end-user-token.service';

/** The part of the request this strategy reads besides the token. */
interface EndUserRequest {
  params?: Record<string, string | undefined>;
}

const INVALID = 'Invalid or expired token';

/**
 * An app end user's token (`X-End-User-Token`, or `Authorization: Bearer` as before): HS256 with the end-user
 * key, issuer and audience `end-user` pinned, and an `appId` claim. On a route with an `{appId}` path
 * parameter the token must have been issued for that app. Then the person is read by `_id` (one primary-key
 * lookup of two fields) and must still exist, not be erased, and have the token version the token carries: a
 * GDPR delete bumps it, so the person's earlier tokens are refused at once by every instance.
 */
@Injectable()
export class EndUserStrategy extends PassportStrategy(Strategy, 'end-user') {
  constructor(
    keys: SecretKeys,
    private readonly contacts: ContactsService,
  ) {
    super({
      jwtFromRequest: endUserToken,
      // A KeyObject (see SecretKeys); the typings list only string | Buffer, jsonwebtoken takes it as is.
      secretOrKey: keys.endUserJwt as unknown as Buffer,
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: END_USER_AUDIENCE,
      passReqToCallback: true,
    });
  }

  async validate(
    request: EndUserRequest,
    claims: Partial<EndUserClaims & { exp: number }>,
  ): Promise<EndUserPrincipal> {
    const { sub, appId, tv, exp } = claims;
    // jsonwebtoken checks `exp` only when present; a token without one would never expire.
    const wellFormed = typeof sub === 'string' && typeof appId === 'string' && typeof tv === 'number';
    if (!wellFormed || typeof exp !== 'number') throw new UnauthorizedException(INVALID);
    // Checked before the read: a token of another app costs no database work.
    const pathAppId = request.params?.appId;
    if (pathAppId !== undefined && pathAppId !== appId) {
      throw new ForbiddenException('This token belongs to another app');
    }
    const person = await this.contacts.findTokenSubject(sub);
    if (!person || person.deletedAt || (person.tokenVersion ?? 0) !== tv) {
      throw new UnauthorizedException(INVALID);
    }
    return { id: sub, appId };
  }
}
