import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import type { AppConfig, Duration } from '../../config/env';
import { SecretKeys } from '../../config/secret-keys';
import { TOKEN_ISSUER } from '../token.service';

/** The audience of end-user tokens; back-office routes never accept it (other audience, other key). */
export const END_USER_AUDIENCE = 'end-user';

/** Claims of an end-user token: `sub` is the person's id, `appId` the app it was issued for. */
export interface EndUserClaims {
  sub: string;
  email: string;
  appId: string;
}

/**
 * Signs end-user bearer tokens (the magic-link sign-in returns one): HS256 with a key of their own, audience
 * `end-user`, lifetime JWT_EXPIRES_IN. The `end-user` strategy beside it verifies them.
 */
@Injectable()
export class EndUserTokenService {
  private readonly lifetime: Duration;

  constructor(
    private readonly jwt: JwtService,
    private readonly keys: SecretKeys,
    config: ConfigService<AppConfig, true>,
  ) {
    this.lifetime = config.get('JWT_EXPIRES_IN', { infer: true });
  }

  sign(user: EndUserPrincipal): Promise<string> {
    return this.jwt.signAsync(
      { email: user.email, appId: user.appId },
      {
        privateKey: this.keys.endUserJwt,
        algorithm: 'HS256',
        issuer: TOKEN_ISSUER,
        audience: END_USER_AUDIENCE,
        subject: user.id,
        expiresIn: this.lifetime,
      },
    );
  }
}
