import { applyDecorators, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import {
  normalizeIp,
  Throttle,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
} from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/env';
import { clientIp } from './client-ip';
import { RedisThrottlerStorage } from './redis-throttler-storage';

const MINUTE_MS = 60_000;

/** What every 429 of the request budgets says (route-specific ones, such as forged signatures, differ). */
export const TOO_MANY_REQUESTS_MESSAGE = 'Too Many Requests: retry after the seconds in Retry-After';

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

/** The throttler's own metadata keys (`@Throttle`, `@SkipThrottle`), as @nestjs/throttler writes them. */
const THROTTLER_METADATA = {
  skip: 'THROTTLER:SKIP',
  limit: 'THROTTLER:LIMIT',
  ttl: 'THROTTLER:TTL',
  blockDuration: 'THROTTLER:BLOCK_DURATION',
  tracker: 'THROTTLER:TRACKER',
  keyGenerator: 'THROTTLER:KEY_GENERATOR',
} as const;

type Resolvable<T> = T | ((context: ExecutionContext) => T | Promise<T>);
type Tracker = NonNullable<ThrottlerOptions['getTracker']>;
type KeyGenerator = NonNullable<ThrottlerOptions['generateKey']>;

interface LimitValues {
  limit: number;
  ttl: number;
  blockDuration: number;
}

/** One limit a route counts: a named throttler with the route's (or its controller's) overrides applied. */
interface RouteThrottler {
  name: string;
  skipIf: ThrottlerOptions['skipIf'];
  /** The values when all are numbers (every limit of this service); else resolved per request. */
  values: LimitValues | undefined;
  declared: { limit: Resolvable<number>; ttl: Resolvable<number>; blockDuration?: Resolvable<number> };
  /** Undefined: the client's address (`clientKey`), without a promise per request. */
  getTracker: Tracker | undefined;
  generateKey: KeyGenerator;
  /** The X-RateLimit-* header names, when this throttler sets them. */
  headers: { limit: string; remaining: string; reset: string } | undefined;
}

/** A limit's value: a number given as such, or what a function of the request returns. */
async function resolved(value: Resolvable<number>, context: ExecutionContext, what: string): Promise<number> {
  const number = typeof value === 'function' ? await value(context) : value;
  if (typeof number !== 'number' || Number.isNaN(number)) {
    throw new Error(`Invalid "${what}" for a throttler: expected a number, got ${JSON.stringify(number)}`);
  }
  return number;
}

/**
 * The throttler guard, answering every 429 with a plain `Retry-After` (seconds), whichever limit was hit,
 * and counting a client by `clientIp` (a forwarded value that is not an IP buys no budget of its own).
 *
 * A route's limits are read from its metadata once, at its first request (`limitsOf`): the library's guard
 * asked the Reflector eleven times and awaited six promises on every request for values fixed when the route
 * was declared (docs/decisions/api-nest-route-cost.md). Counting stays the storage's (`increment`, in Redis
 * with REDIS_URL), and the answers stay the library's: its X-RateLimit-* headers, its 429 message.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  private readonly limitsByHandler = new WeakMap<object, Map<object, RouteThrottler[]>>();

  override async onModuleInit(): Promise<void> {
    await super.onModuleInit();
    if (this.commonOptions.ignoreUserAgents || this.throttlers.some((t) => t.ignoreUserAgents)) {
      throw new Error('ClientThrottlerGuard does not read ignoreUserAgents: every client counts');
    }
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const limits = this.limitsOf(context);
    if (limits.length === 0) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    for (const limit of limits) {
      if (limit.skipIf?.(context)) continue;
      const values = limit.values ?? (await this.resolveValues(limit, context));
      const tracker = limit.getTracker ? await limit.getTracker(request, context) : this.clientKey(request);
      const key = limit.generateKey(context, tracker, limit.name);
      const record = await this.storageService.increment(
        key,
        values.ttl,
        values.limit,
        values.blockDuration,
        limit.name,
      );
      if (record.isBlocked) {
        await this.throwThrottlingException(context, { ...values, ...record, key, tracker });
      }
      if (limit.headers) {
        void reply
          .header(limit.headers.limit, values.limit)
          .header(limit.headers.remaining, Math.max(0, values.limit - record.totalHits))
          .header(limit.headers.reset, record.timeToExpire);
      }
    }
    return true;
  }

  /** The client's budget key part: its address, an IPv6 one by its /64 (the library's `normalizeIp`). */
  private clientKey(request: FastifyRequest): string {
    return normalizeIp(clientIp(request), this.ipv6SubnetPrefix);
  }

  private async resolveValues(limit: RouteThrottler, context: ExecutionContext): Promise<LimitValues> {
    const ttl = await resolved(limit.declared.ttl, context, 'ttl');
    return {
      limit: await resolved(limit.declared.limit, context, 'limit'),
      ttl,
      blockDuration:
        limit.declared.blockDuration === undefined
          ? ttl
          : await resolved(limit.declared.blockDuration, context, 'blockDuration'),
    };
  }

  /** The limits of the route `context` is about, read from its metadata on its first request. */
  private limitsOf(context: ExecutionContext): RouteThrottler[] {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byController = this.limitsByHandler.get(handler);
    if (!byController)
      this.limitsByHandler.set(handler, (byController = new Map<object, RouteThrottler[]>()));
    let limits = byController.get(controller);
    if (!limits) byController.set(controller, (limits = this.readLimits(handler, controller)));
    return limits;
  }

  private readLimits(handler: object, controller: object): RouteThrottler[] {
    const read = <T>(key: string, name: string) =>
      this.reflector.getAllAndOverride<T | undefined>(key + name, [handler as never, controller as never]);
    return this.throttlers
      .filter((throttler) => !read<boolean>(THROTTLER_METADATA.skip, throttler.name!))
      .map((throttler): RouteThrottler => {
        const name = throttler.name!;
        const declared = {
          limit: read<Resolvable<number>>(THROTTLER_METADATA.limit, name) ?? throttler.limit,
          ttl: read<Resolvable<number>>(THROTTLER_METADATA.ttl, name) ?? throttler.ttl,
          blockDuration:
            read<Resolvable<number>>(THROTTLER_METADATA.blockDuration, name) ?? throttler.blockDuration,
        };
        const { limit, ttl } = declared;
        const blockDuration = declared.blockDuration ?? ttl;
        const fixed =
          typeof limit === 'number' && typeof ttl === 'number' && typeof blockDuration === 'number';
        const suffix = name === 'default' ? '' : `-${name}`;
        return {
          name,
          skipIf: throttler.skipIf ?? this.commonOptions.skipIf,
          values: fixed ? { limit, ttl, blockDuration } : undefined,
          declared,
          getTracker:
            read<Tracker>(THROTTLER_METADATA.tracker, name) ??
            throttler.getTracker ??
            (Array.isArray(this.options) ? undefined : this.options.getTracker),
          generateKey:
            read<KeyGenerator>(THROTTLER_METADATA.keyGenerator, name) ??
            throttler.generateKey ??
            this.commonOptions.generateKey!,
          headers:
            (throttler.setHeaders ?? this.commonOptions.setHeaders ?? true)
              ? {
                  limit: `${this.headerPrefix}-Limit${suffix}`,
                  remaining: `${this.headerPrefix}-Remaining${suffix}`,
                  reset: `${this.headerPrefix}-Reset${suffix}`,
                }
              : undefined,
        };
      });
  }

  /** One message for every limit, the one the document shows (the library's names its exception class). */
  protected override getErrorMessage(): Promise<string> {
    return Promise.resolve(TOO_MANY_REQUESTS_MESSAGE);
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
