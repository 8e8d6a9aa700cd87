import type { TokenSubject } from '../users/users.service';
import type { BackOfficeClaims } from './token.service';

/**
 * Whether a verified back-office token still speaks for its user: the user is active, the token carries
 * the user's current token version (a password change, role change, deactivation, 2FA enrolment or reset,
 * or an admin's session revoke raised it), and it was not signed out (`jti` listed). The one place this is
 * decided, so a cached subject goes through the same rule.
 */
export function acceptsToken(
  subject: TokenSubject | null,
  claims: Pick<BackOfficeClaims, 'tv'> & { jti?: string },
): subject is TokenSubject {
  if (!subject || !subject.isActive || (subject.tokenVersion ?? 0) !== claims.tv) return false;
  const jti = claims.jti;
  return !jti || !subject.revokedTokens?.some((revoked) => revoked.jti === jti);
}
