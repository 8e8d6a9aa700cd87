import { Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';
import { bearerRefusal } from '../common/auth/credential.guard';
import type { AuthUser } from '../common/auth/current-user.decorator';
import { EarlyRefusals } from '../common/auth/early-refusal';
import type { Role } from '../common/auth/roles';
import type { CredentialCache } from '../common/credentials/credential-cache';
import { CredentialChanges } from '../common/credentials/credential-changes';
import type { AppConfig } from '../config/env';
import { SecretKeys } from '../config/secret-keys';
import { displayName, type TokenSubject, UsersService } from '../users/users.service';
import { TOKEN_ISSUER } from './jwt-options';
import { signedBearerToken } from './signed-bearer-token';
import { BACK_OFFICE_AUDIENCE, type BackOfficeClaims } from './token.service';
import { acceptsToken } from './token-acceptance';
import { requiredRoles } from './two-factor/required-roles';

/**
 * The back-office bearer token (`Authorization: Bearer <jwt>`): a token whose signature does not match is
 * refused before anything in it is decoded; then HS256 only, issuer and audience pinned, and the user (by
 * `_id`, from the credential cache, else one lookup) must be active with the token version the token carries,
 * so a deactivation, role change or password change ends earlier tokens on every instance within a second
 * (CredentialChanges). The current role of the user record, not the claim, is what the guard checks. A
 * signed-out token (`jti` listed) is refused too, and a user whose role must use two-factor sign-in but has
 * not enrolled is marked for the guard (`twoFactorSetupRequired`: only the enrolment routes answer).
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  private readonly twoFactorRoles: ReadonlySet<Role>;
  /** Token subjects by user id (what `findTokenSubject` answered, null for no such user). */
  private readonly subjects: CredentialCache<TokenSubject | null>;

  constructor(
    keys: SecretKeys,
    private readonly users: UsersService,
    private readonly changes: CredentialChanges,
    config: ConfigService<AppConfig, true>,
    refusals: EarlyRefusals,
  ) {
    const signedToken = signedBearerToken(keys.jwt);
    super({
      jwtFromRequest: signedToken,
      // A KeyObject (see SecretKeys); the typings list only string | Buffer, jsonwebtoken takes it as is.
      secretOrKey: keys.jwt as unknown as Buffer,
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: BACK_OFFICE_AUDIENCE,
    });
    this.twoFactorRoles = requiredRoles(config.get('TWO_FACTOR_REQUIRED_ROLES', { infer: true }));
    this.subjects = changes.cache(['users']);
    // What passport-jwt would fail for want of a token: no header, not a JWT, a signature not ours.
    refusals.register('bearer', (request) => (signedToken(request) ? null : bearerRefusal(request)));
  }

  async validate(claims: Partial<BackOfficeClaims & { exp: number; jti: string }>): Promise<AuthUser> {
    // jsonwebtoken checks `exp` only when present; a token without one would never expire.
    const user =
      typeof claims.sub === 'string' && typeof claims.tv === 'number' && typeof claims.exp === 'number'
        ? await this.subjectOf(claims.sub)
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

  private async subjectOf(id: string): Promise<TokenSubject | null> {
    const pending = this.changes.current();
    if (pending) await pending;
    const cached = this.subjects.get(id);
    if (cached !== undefined) return cached;
    const generation = this.subjects.generation;
    const subject = await this.users.findTokenSubject(id);
    this.subjects.store(id, subject, generation);
    return subject;
  }
}
