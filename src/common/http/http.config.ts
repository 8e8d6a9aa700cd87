import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';
import { isIP } from 'node:net';
import { emptyToUndefined, type EnvSection, toInt } from '../../config/env-rules';
import { PROXY_RANGE_NAMES, trustProxyProductionProblem } from '../../config/trust-proxy';

/**
 * A `redis://` or `rediss://` (TLS) URL with a host, as ioredis reads it; the path, if any, is a db number.
 */
function isRedisUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'redis:' || url.protocol === 'rediss:') &&
      url.hostname !== '' &&
      /^(\/\d{0,2})?$/.test(url.pathname)
    );
  } catch {
    return false;
  }
}
const IsRedisUrl = () =>
  ValidateBy({
    name: 'isRedisUrl',
    validator: {
      validate: isRedisUrl,
      defaultMessage: () =>
        'must be a redis:// or rediss:// URL such as redis://redis:6379 or redis://:password@host:6379/0',
    },
  });

/** An IP, a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a named range, as one entry of a TRUST_PROXY list. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** `true`, a hop count, or a comma-separated list of the load balancer's IPs/CIDRs. */
function isTrustProxy(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (value === 'true' || /^\d{1,2}$/.test(value)) return true;
  return value.split(',').every((entry) => isProxyEntry(entry.trim()));
}
const IsTrustProxy = () =>
  ValidateBy({
    name: 'isTrustProxy',
    validator: {
      validate: isTrustProxy,
      defaultMessage: () =>
        "must be the load balancer's IPs/CIDRs (comma-separated, e.g. 10.0.0.0/8), a hop count, or true",
    },
  });

/** Who the HTTP layer believes about a client's address, and how many requests it lets each client make. */
export class HttpEnv {
  /** Who may name the client in X-Forwarded-For; production takes only narrow ranges (trust-proxy.ts). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsTrustProxy()
  TRUST_PROXY?: string;

  /**
   * Shared storage of the rate-limit counters when several instances run; unset: each process counts alone.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsRedisUrl()
  REDIS_URL?: string;

  /** Requests per minute one client (IP) may make across all routes; some routes allow fewer. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  RATE_LIMIT_PER_MINUTE = 600;
}

export const httpEnv: EnvSection<HttpEnv> = {
  schema: HttpEnv,
  checks(env, invalid) {
    if (env.NODE_ENV !== 'production' || !env.TRUST_PROXY || invalid.has('TRUST_PROXY')) return [];
    const tooTrusting = trustProxyProductionProblem(env.TRUST_PROXY);
    return tooTrusting ? [tooTrusting] : [];
  },
};
