import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import { SecretKeys } from '../../config/secret-keys';

/** The audience of end-user tokens; back-office routes never accept it (other audience, other key). */
export const END_USER_AUDIENCE = 'end-user';

/**
 * Claims of an end-user token: `sub` is the person's id, `appId` the app it was issued for, `tv` the
 * person's token version when it was issued. No address: a token copied into a log or a browser's storage
 * names a record, not a person, and outlives no erasure (the version is checked on every request).
 */
export interface EndUserClaims {
  sub: string;
  appId: string;
  tv: number;
}

/**
 * Signs end-user bearer tokens (the magic-link sign-in returns one) with a key of their own and audience
 * `end-user` (algorithm, issuer and lifetime from jwt-options.ts). The `end-user` strategy verifies them.
 */
@Injectable()
export class EndUserTokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly keys: SecretKeys,
  ) {}

  sign(user: EndUserPrincipal, tokenVersion: number): Promise<string> {
    return this.jwt.signAsync({ appId: user.appId, tv: tokenVersion } satisfies Omit<EndUserClaims, 'sub'>, {
      privateKey: this.keys.endUserJwt,
      audience: END_USER_AUDIENCE,
      subject: user.id,
    });
  }
}
