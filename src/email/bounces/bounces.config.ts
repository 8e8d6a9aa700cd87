import { Transform } from 'class-transformer';
import { IsInt, IsIP, IsOptional, Matches, Max, Min } from 'class-validator';
import { emptyToUndefined, type EnvSection, toInt } from '../../config/env-rules';

/** Bounce handling on any transport (docs/operations/email-delivery.md "Bounces"). */
export class BouncesEnv {
  /**
   * The host of the VERP envelope senders (`b+<token>@BOUNCE_DOMAIN`), whose MX leads to the inbound
   * listener; a sender domain's verified return-path host is used instead for its mail. Unset: no VERP.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i, {
    message: 'must be a host name, e.g. bounces.example.com',
  })
  BOUNCE_DOMAIN?: string;

  /** The port of the inbound SMTP listener for DSNs and ARF reports; unset: no listener. */
  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65_535)
  BOUNCE_SMTP_PORT?: number;

  /** The address the listener binds: loopback by default, behind the MX relay that receives bounce mail. */
  @IsIP()
  BOUNCE_SMTP_HOST = '127.0.0.1';

  /** The largest inbound report taken; a larger one is refused (552) while it is being sent. */
  @Transform(toInt)
  @IsInt()
  @Min(10_000)
  @Max(50_000_000)
  BOUNCE_MAX_MESSAGE_BYTES = 2_000_000;

  /** How long an inbound connection may stay silent before the listener closes it. */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(600_000)
  BOUNCE_SMTP_TIMEOUT_MS = 30_000;

  /** Soft bounces (N) among an address's last SOFT_BOUNCE_WINDOW messages that suppress it. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  SOFT_BOUNCE_LIMIT = 3;

  /** How many of an address's latest messages (M) the soft-bounce rule looks at. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  SOFT_BOUNCE_WINDOW = 5;
}

/** The rule must be reachable: N soft bounces cannot happen in fewer than N messages. */
function softBounceProblems(env: BouncesEnv, invalid: ReadonlySet<string>): string[] {
  if (invalid.has('SOFT_BOUNCE_LIMIT') || invalid.has('SOFT_BOUNCE_WINDOW')) return [];
  return env.SOFT_BOUNCE_LIMIT > env.SOFT_BOUNCE_WINDOW
    ? ['  SOFT_BOUNCE_LIMIT: must not exceed SOFT_BOUNCE_WINDOW']
    : [];
}

export const bouncesEnv: EnvSection<BouncesEnv> = { schema: BouncesEnv, checks: softBounceProblems };
