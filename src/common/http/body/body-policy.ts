import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import type { FastifyRequest } from 'fastify';

/**
 * What a route accepts as a request body. Checked before anything parses or validates it, so a hostile
 * body costs at most a read of `maxBytes` and one walk over at most `maxFields` values.
 */
export interface BodyPolicy {
  /** Larger bodies answer 413 (by their Content-Length when they declare one, before reading). */
  maxBytes: number;
  /** Object properties plus array items, all levels together; more → 400. */
  maxFields: number;
  /** Objects and arrays inside each other; deeper → 400. */
  maxDepth: number;
  /** The route reads `multipart/form-data` itself (`request.parts()`); elsewhere it is a 415. */
  multipart: boolean;
  /**
   * The route also takes `application/x-www-form-urlencoded` (an HTML form without JavaScript, the RFC 8058
   * one-click POST); elsewhere it is a 415.
   */
  form: boolean;
  /**
   * Keep the body's exact bytes as `request.rawBody` and parse nothing: the route's credential parses them
   * (with `parseJsonBytes`) once it trusts them. A signed provider webhook checks its signature on these
   * bytes first, so a forged body costs one read and one HMAC, never a JSON parse.
   */
  rawBody: boolean;
}

/** Every JSON route unless it says otherwise: enough for any form of the back office. */
export const DEFAULT_BODY_POLICY: BodyPolicy = {
  maxBytes: 64 * 1024,
  maxFields: 1_000,
  maxDepth: 16,
  multipart: false,
  form: false,
  rawBody: false,
};

/** Routes anyone may call (login, feedback, joinlist, magic link): a form's worth of JSON. */
export const PUBLIC_BODY_BYTES = 16 * 1024;

/**
 * Routes that take long template text (campaigns, newsletter templates): room for two 100,000-character
 * fields written in any Basic Multilingual Plane script (UTF-8, at most 3 bytes a character) and the rest, so
 * a body the OpenAPI schema allows is never a 413 (docs/api/newsletters.md "Campaigns and tracking").
 */
export const CONTENT_BODY_BYTES = 640 * 1024;

/** The ceiling no route may raise its limit above (Fastify reads no more than this). */
export const MAX_BODY_BYTES = 1024 * 1024;

interface RouteConfigWithBody {
  body?: Partial<BodyPolicy>;
}

/**
 * Declares a route's body policy (merged over the defaults), stored in the Fastify route config so the
 * parser and the early Content-Length check can read it. Several decorators may each add a part
 * (`@WebhookSignature()` adds `rawBody`); they merge instead of replacing each other.
 */
export function AcceptsBody(policy: Partial<BodyPolicy>): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as RouteConfigWithBody;
    Reflect.defineMetadata(
      FASTIFY_ROUTE_CONFIG_METADATA,
      { ...config, body: { ...config.body, ...policy } },
      handler,
    );
  };
}

/** The policy of the route a request matched (the defaults for unknown routes). */
export function bodyPolicyOf(request: FastifyRequest): BodyPolicy {
  const config = request.routeOptions?.config as RouteConfigWithBody | undefined;
  return { ...DEFAULT_BODY_POLICY, ...config?.body };
}
