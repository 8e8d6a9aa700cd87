import { Transform } from 'class-transformer';
import { IsOptional, Matches } from 'class-validator';
import { emptyToUndefined, type EnvSection } from '../config/env-rules';

/** A lifetime such as `15m`, `1h` or `7d`, as the JWT library takes it. */
export type Duration = `${number}${'s' | 'm' | 'h' | 'd'}`;

/** Administrators' sessions and their second factor. */
export class AuthEnv {
  @Matches(/^\d+[smhd]$/, { message: 'must be a duration such as 15m, 1h or 7d' })
  JWT_EXPIRES_IN: Duration = '1h';

  /**
   * Staff roles that must enrol TOTP before anything else (comma-separated, e.g. `admin` or `admin,user`):
   * such a user without it may sign in only to set it up. Unset: two-factor sign-in is optional for all.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^\s*(admin|user|viewer)\s*(,\s*(admin|user|viewer)\s*)*$/, {
    message: 'must be staff roles separated by commas (admin, user, viewer), e.g. admin',
  })
  TWO_FACTOR_REQUIRED_ROLES?: string;
}

export const authEnv: EnvSection<AuthEnv> = { schema: AuthEnv };
