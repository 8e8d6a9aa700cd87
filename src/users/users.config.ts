import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { emptyToUndefined, type EnvSection, toInt } from '../config/env-rules';

/** Production keeps passwords at a real work factor; tests and development may go lower to run fast. */
const PRODUCTION_MIN_BCRYPT_COST = 10;

/** The first administrator (created at start when there is none) and how passwords are stored. */
export class UsersEnv {
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @Matches(/^[^\s@]+@[^\s@]+$/, { message: 'must be an e-mail address' })
  ADMIN_EMAIL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(6)
  @MaxLength(72, { message: 'must be at most 72 characters (bcrypt)' })
  ADMIN_PASSWORD?: string;

  /** bcrypt work factor of stored passwords: each step doubles the time of a login (12 ≈ 0.25 s here). */
  @Transform(toInt)
  @IsInt()
  @Min(4)
  @Max(14)
  BCRYPT_COST = 12;
}

export const usersEnv: EnvSection<UsersEnv> = {
  schema: UsersEnv,
  checks: (env) =>
    env.NODE_ENV === 'production' && env.BCRYPT_COST < PRODUCTION_MIN_BCRYPT_COST
      ? [`  BCRYPT_COST: must be at least ${PRODUCTION_MIN_BCRYPT_COST} when NODE_ENV=production`]
      : [],
};
