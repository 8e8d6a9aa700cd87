import { Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';
import { bearerToken } from '../common/auth/bearer-token';
import type { AuthUser } from '../common/auth/current-user.decorator';
import type { Role } from '../common/auth/roles';
import type { AppConfig } from '../config/env';
import { SecretKeys } from '../config/secret-keys';
import { displayName, UsersService } from '../users/users.service';
import { TOKEN_ISSUER } from './jwt-options';
import { BACK_OFFICE_AUDIENCE, type BackOfficeClaims } from './token.service';
import { acceptsToken } from './token-acceptance';
import { requiredRoles } from './two-factor/required-roles';

/**
 * The back-office bearer token (`Authorization: Bearer <jwt>`): HS256 only, issuer and audience pinned, then
 * the user is loaded by `_id` (one lookup) and must be active with the token version the token carries, so a
 * deactivation, role change or password change ends earlier tokens at once. The current role from the
 * database, not the claim, is what the guard checks. A signed-out token (`jti` listed) is refused too, and a
 * user whose role must use two-factor sign-in but has not enrolled is marked for the guard
 * (`twoFactorSetupRequired`: only the enrolment routes answer).
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  private readonly twoFactorRoles: ReadonlySet<Role>;

  constructor(
    keys: SecretKeys,
    private readonly users: UsersService,
    config: ConfigService<AppConfig, true>,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // A KeyObject (see SecretKeys); the typings list only string | Buffer, jsonwebtoken takes it as is.
      secretOrKey: keys.jwt as unknown as Buffer,
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: BACK_OFFICE_AUDIENCE,
    });
    this.twoFactorRoles = requiredRoles(config.get('TWO_FACTOR_REQUIRED_ROLES', { infer: true }));
  }

  async validate(claims: Partial<BackOfficeClaims & { exp: number; jti: string }>): Promise<AuthUser> {
    // jsonwebtoken checks `exp` only when present; a token without one would never expire.
    const user =
      typeof claims.sub === 'string' && typeof claims.tv === 'number' && typeof claims.exp === 'number'
        ? await this.users.findTokenSubject(claims.sub)
        : null;
    if (!acceptsToken(user, { tv: claims.tv ?? -1, jti: claims.jti })) {
      throw new UnauthorizedException('Invalid or expired token');
    }
    const caller: AuthUser = {
      id: String(user._id),
      email: user.email,
      name: displayName(user),
      role: user.role,
    };
    if (this.twoFactorRoles.has(user.role) && !user.twoFactorEnabled) caller.twoFactorSetupRequired = true;
    return caller;
  }
}
