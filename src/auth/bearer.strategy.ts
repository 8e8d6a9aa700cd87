import { Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';
import { bearerToken } from '../common/auth/bearer-token';
import type { AuthUser } from '../common/auth/current-user.decorator';
import { SecretKeys } from '../config/secret-keys';
import { displayName, UsersService } from '../users/users.service';
import { TOKEN_ISSUER } from './jwt-options';
import { BACK_OFFICE_AUDIENCE, type BackOfficeClaims } from './token.service';

/**
 * The back-office bearer token (`Authorization: Bearer <jwt>`): HS256 only, issuer and audience pinned, then
 * the user is loaded by `_id` (one lookup) and must be active with the token version the token carries, so a
 * deactivation, role change or password change ends earlier tokens at once. The current role from the
 * database, not the claim, is what the guard checks.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    keys: SecretKeys,
    private readonly users: UsersService,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // A KeyObject (see SecretKeys); the typings list only string | Buffer, jsonwebtoken takes it as is.
      secretOrKey: keys.jwt as unknown as Buffer,
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: BACK_OFFICE_AUDIENCE,
    });
  }

  async validate(claims: Partial<BackOfficeClaims & { exp: number }>): Promise<AuthUser> {
    // jsonwebtoken checks `exp` only when present; a token without one would never expire.
    const user =
      typeof claims.sub === 'string' && typeof claims.tv === 'number' && typeof claims.exp === 'number'
        ? await this.users.findTokenSubject(claims.sub)
        : null;
    if (!user || !user.isActive || (user.tokenVersion ?? 0) !== claims.tv) {
      throw new UnauthorizedException('Invalid or expired token');
    }
    return { id: String(user._id), email: user.email, name: displayName(user), role: user.role };
  }
}
