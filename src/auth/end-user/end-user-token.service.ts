import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import { SecretKeys } from '../../config/secret-keys';

/** The audience of end-user tokens; back-office routes never accept it (other audience, other key). */
export const END_USER_AUDIENCE = 'end-user';

/** Claims of an end-user token: `sub` is the person's id, `appId` the app it was issued for. */
export interface EndUserClaims {
  sub: string;
  email: string;
  appId: string;
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

  sign(user: EndUserPrincipal): Promise<string> {
    return this.jwt.signAsync(
      { email: user.email, appId: user.appId },
      { privateKey: this.keys.endUserJwt, audience: END_USER_AUDIENCE, subject: user.id },
    );
  }
}
