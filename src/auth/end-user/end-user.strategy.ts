import { ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { CredentialChecks } from '../../common/auth/credential-checks';
import { endUserToken, sentEndUserToken } from '../../common/auth/end-user-token';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import { SecretKeys } from '../../config/secret-keys';
import { ContactsService } from '../../contacts/contacts.service';
import { signedToken, tokenClaims } from '../signed-token';
import { END_USER_AUDIENCE, type EndUserClaims } from './end-user-token.service';

/** The part of the request this strategy reads. */
export interface EndUserRequest {
  headers: Record<string, string | string[] | undefined>;
  params?: unknown;
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
export class EndUserStrategy {
  private readonly signed: (request: EndUserRequest) => string | null;

  constructor(
    keys: SecretKeys,
    private readonly contacts: ContactsService,
    checks: CredentialChecks,
  ) {
    this.signed = signedToken(keys.endUserJwt, endUserToken);
    checks.register('end-user', (request) => this.verify(request));
  }

  async verify(request: EndUserRequest): Promise<EndUserPrincipal> {
    const token = this.signed(request);
    if (!token) {
      throw new UnauthorizedException(
        sentEndUserToken(request) ? INVALID : 'Missing X-End-User-Token header',
      );
    }
    const claims = tokenClaims<EndUserClaims>(token, END_USER_AUDIENCE) ?? {};
    const { sub, appId, tv } = claims;
    const wellFormed = typeof sub === 'string' && typeof appId === 'string' && typeof tv === 'number';
    if (!wellFormed) throw new UnauthorizedException(INVALID);
    // Checked before the read: a token of another app costs no database work.
    const pathAppId = (request.params as Record<string, string | undefined> | undefined)?.appId;
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
