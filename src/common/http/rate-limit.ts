import { applyDecorators, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import {
  normalizeIp,
  Throttle,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
} from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/env';
import { clientIp } from './client-ip';
import { RedisThrottlerStorage } from './redis-throttler-storage';

const MINUTE_MS = 60_000;

/** Set by `@RouteLimit()` beside the throttler's own metadata. */
const ROUTE_LIMITED = 'rate-limit:route-limited';
const tightenedHandlers = new WeakMap<object, boolean>();

/**
 * Whether the route (or its controller) tightens the `route` limit with `@RouteLimit()`. Elsewhere that limit
 * equals the budget, which already counts every request of the client: a second counter (a SHA-256 key and
 * a storage update per request, a round trip with Redis) would never refuse anything.
 */
function hasRouteLimit(context: ExecutionContext): boolean {
  const handler = context.getHandler();
  let tightened = tightenedHandlers.get(handler);
  if (tightened === undefined) {
    tightened =
      Reflect.getMetadata(ROUTE_LIMITED, handler) === true ||
      Reflect.getMetadata(ROUTE_LIMITED, context.getClass()) === true;
    tightenedHandlers.set(handler, tightened);
  }
  return tightened;
}

/**
 * Counted in Redis when REDIS_URL is set (shared by every instance), else in this process's memory. The
 * storage is the ThrottlerModule's `ThrottlerStorage` provider, which the magic-link address limit uses too.
 *
 * Two limits per client IP:
 * - `default`: one budget of RATE_LIMIT_PER_MINUTE requests across all routes (the key has no route in it,
 *   so calling 70 routes does not buy 70 budgets);
 * - `route`: per route and client, counted only where a route tightens it with `@RouteLimit()`.
 */
export function throttlerOptions(config: ConfigService<AppConfig, true>): ThrottlerModuleOptions {
  const limit = config.get('RATE_LIMIT_PER_MINUTE', { infer: true });
  const redisUrl = config.get('REDIS_URL', { infer: true });
  return {
    storage: redisUrl ? new RedisThrottlerStorage(redisUrl) : undefined,
    throttlers: [
      { name: 'default', ttl: MINUTE_MS, limit, generateKey: (_context, client) => `client:${client}` },
      // Its headers would only repeat the budget's; a route's 429 gets a plain Retry-After below.
      {
        name: 'route',
        ttl: MINUTE_MS,
        limit,
        setHeaders: false,
        skipIf: (context) => !hasRouteLimit(context),
      },
    ],
  };
}

/** At most `limit` requests per `ttlMs` from one client to this route (login, public forms). */
export const RouteLimit = (limit: number, ttlMs = MINUTE_MS) =>
  applyDecorators(Throttle({ route: { limit, ttl: ttlMs } }), SetMetadata(ROUTE_LIMITED, true));

/**
 * The throttler guard, answering every 429 with a plain `Retry-After` (seconds), whichever limit was hit,
 * and counting a client by `clientIp` (a forwarded value that is not an IP buys no budget of its own).
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  protected override getTracker(request: FastifyRequest): Promise<string> {
    return Promise.resolve(normalizeIp(clientIp(request), this.ipv6SubnetPrefix));
  }

  protected override async throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    context
      .switchToHttp()
      .getResponse<FastifyReply>()
      .header('Retry-After', Math.max(1, detail.timeToBlockExpire));
    await super.throwThrottlingException(context, detail);
  }
}
