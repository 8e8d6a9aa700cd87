import helmet from '@fastify/helmet';
import multipart from '@fastify/multipart';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { MAX_BODY_BYTES } from './common/http/body/body-policy';
import { registerBodyParsers } from './common/http/body/body-parsers';
import {
  clientErrorHandler,
  frameworkErrorHandler,
  HELMET_OPTIONS,
  MAX_PATH_SEGMENT,
} from './common/http/edge-errors';
import { setupOpenApi } from './common/swagger/openapi';

/**
 * Ceilings for every multipart request; a route passes tighter limits of its own to `request.parts()`.
 * Multipart bodies are streamed by the route, so these (not the JSON limits) bound their size.
 */
export const MULTIPART_LIMITS = {
  files: 10,
  fileSize: 10 * 1024 * 1024,
  fields: 20,
  fieldSize: 64 * 1024,
  parts: 40,
};

/** How long a client may take to send a whole request (headers and body). */
const REQUEST_TIMEOUT_MS = 30_000;

const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[\w.-]{1,128}$/;

/** Reuses the caller's (or load balancer's) request id when it is well-formed; otherwise makes one. */
function requestId(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Fastify's `trustProxy` from TRUST_PROXY: `true`, a hop count, or IPs/CIDRs of the load balancer. */
function trustProxy(value: string | undefined): boolean | string | number {
  if (value === undefined || value === '') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export function createFastifyAdapter(trustProxySetting: string | undefined): FastifyAdapter {
  return new FastifyAdapter({
    // The largest body any route may take; each route's own limit is checked by the JSON parser.
    bodyLimit: MAX_BODY_BYTES,
    trustProxy: trustProxy(trustProxySetting),
    // Paths answer with or without the trailing slash the spec writes (`/users/` and `/users`).
    // Signed link tokens travel in the path (`/unsubscribe/{token}`, tracking links): longer than Fastify's
    // default of 100 characters per parameter, still bounded (LinkTokens refuses more than 512).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    // Access logs come from nestjs-pino, which logs this request id.
    logger: false,
    genReqId: requestId,
    requestIdHeader: false,
    // Stop accepting on close, but let in-flight requests finish.
    return503OnClosing: true,
    // A body that never arrives (a Content-Length larger than what is sent) ends with a 408, not a held socket.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Router and HTTP-parser errors answer like every other error (envelope, security headers, request id).
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
}

/** Everything main.ts and the tests apply on top of AppModule, so both run the same pipeline. */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  app.useLogger(app.get(Logger));
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', async (request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
    });
  app.enableShutdownHooks();
  app.enableCors({
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-API-Key', 'X-App-Key', 'X-User-Id', 'X-Request-Id'],
    exposedHeaders: ['X-Request-Id', 'Retry-After'],
    maxAge: 600,
  });
  await app.register(helmet, HELMET_OPTIONS);
  registerBodyParsers(app);
  await app.register(multipart, { limits: MULTIPART_LIMITS });
  setupOpenApi(app);
}
