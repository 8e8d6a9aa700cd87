import { Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { FastifyRequest } from 'fastify';
import { bearerToken } from '../common/auth/bearer-token';
import { bearerRefusal } from '../common/auth/credential.guard';
import { CredentialChecks } from '../common/auth/credential-checks';
import type { AuthUser } from '../common/auth/current-user.decorator';
import { EarlyRefusals } from '../common/auth/early-refusal';
import type { Role } from '../common/auth/roles';
import type { CredentialCache } from '../common/credentials/credential-cache';
import { CredentialChanges } from '../common/credentials/credential-changes';
import type { AppConfig } from '../config/env';
import { SecretKeys } from '../config/secret-keys';
import { displayName, type TokenSubject, UsersService } from '../users/users.service';
import { signedToken, tokenClaims } from './signed-token';
import { BACK_OFFICE_AUDIENCE, type BackOfficeClaims } from './token.service';
import { acceptsToken } from './token-acceptance';
import { requiredRoles } from './two-factor/required-roles';

const INVALID = 'Invalid or expired token';

/**
 * The back-office bearer token (`Authorization: Bearer <jwt>`): a token whose signature does not match is
 * refused before anything in it is decoded; then HS256 only, issuer and audience pinned, an expiry required
 * (`tokenClaims`), and the user (by `_id`, from the credential cache, else one lookup) must be active with
 * the token version the token carries, so a deactivation, role change or password change ends earlier
 * tokens on every instance within a second (CredentialChanges). The current role of the user record, not
 * the claim, is what the guard checks. A signed-out token (`jti` listed) is refused too, and a user whose
 * role must use two-factor sign-in but has not enrolled is marked for the guard (`twoFactorSetupRequired`:
 * only the enrolment routes answer).
 */
@Injectable()
export class BearerStrategy {
  private readonly signed: (request: FastifyRequest) => string | null;
  private readonly twoFactorRoles: ReadonlySet<Role>;
  /** Token subjects by user id (what `findTokenSubject` answered, null for no such user). */
  private readonly subjects: CredentialCache<TokenSubject | null>;

  constructor(
    keys: SecretKeys,
    private readonly users: UsersService,
    private readonly changes: CredentialChanges,
    config: ConfigService<AppConfig, true>,
    refusals: EarlyRefusals,
    checks: CredentialChecks,
  ) {
    this.signed = signedToken(keys.jwt, bearerToken);
    this.twoFactorRoles = requiredRoles(config.get('TWO_FACTOR_REQUIRED_ROLES', { infer: true }));
    this.subjects = changes.cache(['users']);
    // Refused for certain: no header, not a JWT, a signature not ours.
    refusals.register('bearer', (request) => (this.signed(request) ? null : bearerRefusal(request)));
    checks.register('bearer', (request) => this.verify(request));
  }

  async verify(request: FastifyRequest): Promise<AuthUser> {
    const token = this.signed(request);
    if (!token) throw new UnauthorizedException(bearerRefusal(request));
    const claims = tokenClaims<BackOfficeClaims & { jti: string }>(token, BACK_OFFICE_AUDIENCE);
    const user =
      claims && typeof claims.sub === 'string' && typeof claims.tv === 'number'
        ? await this.subjectOf(claims.sub)
        : null;
    if (!claims || !acceptsToken(user, { tv: claims.tv ?? -1, jti: claims.jti })) {
      throw new UnauthorizedException(INVALID);
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
