import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import type { AppConfig, Duration } from '../config/env';
import { SecretKeys } from '../config/secret-keys';

export const TOKEN_ISSUER = 'admin-service';
export const BACK_OFFICE_AUDIENCE = 'admin-service:back-office';

/** Claims of a back-office bearer token. `tv` is the user's token version at signing time. */
export interface BackOfficeClaims {
  sub: string;
  role: string;
  tv: number;
}

/**
 * Signs back-office bearer tokens: HS256, issuer and audience set. The `bearer` strategy beside it
 * (bearer.strategy.ts) verifies them with the same key, algorithm, issuer and audience.
 */
@Injectable()
export class TokenService {
  private readonly lifetime: Duration;

  constructor(
    private readonly jwt: JwtService,
    private readonly keys: SecretKeys,
    config: ConfigService<AppConfig, true>,
  ) {
    this.lifetime = config.get('JWT_EXPIRES_IN', { infer: true });
  }

  sign(claims: BackOfficeClaims): Promise<string> {
    return this.jwt.signAsync(
      { role: claims.role, tv: claims.tv },
      {
        privateKey: this.keys.jwt,
        algorithm: 'HS256',
        issuer: TOKEN_ISSUER,
        audience: BACK_OFFICE_AUDIENCE,
        subject: claims.sub,
        expiresIn: this.lifetime,
      },
    );
  }
}
