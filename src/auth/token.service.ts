import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import { BACK_OFFICE_AUDIENCE } from '../common/auth/token-audiences';
import { SecretKeys } from '../config/secret-keys';

export { TOKEN_ISSUER } from './jwt-options';
export { BACK_OFFICE_AUDIENCE };

/** Claims of a back-office bearer token. `tv` is the user's token version at signing time. */
export interface BackOfficeClaims {
  sub: string;
  role: string;
  tv: number;
}

/**
 * Signs back-office bearer tokens (algorithm, issuer and lifetime from jwt-options.ts). The `bearer`
 * strategy beside it (bearer.strategy.ts) verifies them with the same key, algorithm, issuer and audience.
 */
@Injectable()
export class TokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly keys: SecretKeys,
  ) {}

  sign(claims: BackOfficeClaims): Promise<string> {
    return this.jwt.signAsync(
      { role: claims.role, tv: claims.tv },
      {
        privateKey: this.keys.jwt,
        audience: BACK_OFFICE_AUDIENCE,
        subject: claims.sub,
        // Names this token alone, so signing out (POST /auth/logout) can end it and no other.
        jwtid: randomBytes(12).toString('base64url'),
      },
    );
  }

  /** The id and expiry of a token the bearer guard has already verified (not verified again here). */
  claimsOf(token: string): { jti?: string; exp?: number } {
    const claims = this.jwt.decode<{ jti?: unknown; exp?: unknown } | null>(token);
    return {
      jti: typeof claims?.jti === 'string' ? claims.jti : undefined,
      exp: typeof claims?.exp === 'number' ? claims.exp : undefined,
    };
  }
}
