import type { ConfigService } from '@nestjs/config';
import type { JwtModuleOptions } from '@nestjs/jwt';
import type { AppConfig } from '../config/env';

/** The `iss` of every token this service signs, back-office and end-user alike. */
export const TOKEN_ISSUER = 'admin-service';

/**
 * What every token signed here shares: HS256, our issuer, JWT_EXPIRES_IN. Each signer adds its key (a
 * KeyObject of its own), audience and subject; each strategy verifies exactly these.
 */
export function jwtOptions(config: ConfigService<AppConfig, true>): JwtModuleOptions {
  return {
    signOptions: {
      algorithm: 'HS256',
      issuer: TOKEN_ISSUER,
      expiresIn: config.get('JWT_EXPIRES_IN', { infer: true }),
    },
  };
}
