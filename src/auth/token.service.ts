import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { deriveKey } from '../common/crypto/derive-key';
import { Env } from '../config/env';

export const TOKEN_ISSUER = 'admin-service';
export const BACK_OFFICE_AUDIENCE = 'admin-service:back-office';

/** Claims of a back-office bearer token. `tv` is the user's token version at signing time. */
export interface BackOfficeClaims {
  sub: string;
  role: string;
  tv: number;
}

/** Signs and verifies back-office bearer tokens: HS256 only, issuer and audience pinned and checked. */
@Injectable()
export class TokenService {
  private readonly secret: Buffer;

  constructor(
    private readonly jwt: JwtService,
    private readonly env: Env,
  ) {
    this.secret = deriveKey(env.APP_SECRET!, 'jwt');
  }

  sign(claims: BackOfficeClaims): Promise<string> {
    return this.jwt.signAsync(
      { role: claims.role, tv: claims.tv },
      {
        secret: this.secret,
        algorithm: 'HS256',
        issuer: TOKEN_ISSUER,
        audience: BACK_OFFICE_AUDIENCE,
        subject: claims.sub,
        expiresIn: this.env.JWT_EXPIRES_IN as `${number}${'s' | 'm' | 'h' | 'd'}`,
      },
    );
  }

  /** The claims of a valid token, or null for anything forged, expired or meant for another audience. */
  async verify(token: string): Promise<BackOfficeClaims | null> {
    try {
      const payload = await this.jwt.verifyAsync<Partial<BackOfficeClaims>>(token, {
        secret: this.secret,
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        audience: BACK_OFFICE_AUDIENCE,
      });
      if (typeof payload.sub !== 'string' || typeof payload.tv !== 'number') return null;
      return { sub: payload.sub, role: String(payload.role), tv: payload.tv };
    } catch {
      return null;
    }
  }
}
