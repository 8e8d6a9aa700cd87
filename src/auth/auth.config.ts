import { Matches } from 'class-validator';
import type { EnvSection } from '../config/env-rules';

/** A lifetime such as `15m`, `1h` or `7d`, as the JWT library takes it. */
export type Duration = `${number}${'s' | 'm' | 'h' | 'd'}`;

/** Administrators' sessions. */
export class AuthEnv {
  @Matches(/^\d+[smhd]$/, { message: 'must be a duration such as 15m, 1h or 7d' })
  JWT_EXPIRES_IN: Duration = '1h';
}

export const authEnv: EnvSection<AuthEnv> = { schema: AuthEnv };
