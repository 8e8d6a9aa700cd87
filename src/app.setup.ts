import multipart from '@fastify/multipart';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { PinoLogger } from 'nestjs-pino';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { attachAuditTrail } from './audit/audit-routes';
import { EarlyRefusals, registerEarlyRefusal } from './common/auth/early-refusal';
import { allowedMethods } from './common/http/allowed-methods';
import type { ErrorBody } from './common/http/envelope';
import { MAX_BODY_BYTES } from './common/http/body/body-policy';
import { registerBodyParsers } from './common/http/body/body-parsers';
import { isDirectRoute } from './common/http/direct-routes';
import {
  clientErrorHandler,
  DOCS_SECURITY_HEADERS,
  frameworkErrorHandler,
  isDocsPage,
  MAX_PATH_SEGMENT,
  SECURITY_HEADERS,
} from './common/http/edge-errors';
import { registerAccessLog } from './common/logging/access-log';
import { registerRequestScope } from './common/http/request-scope';
import { ServiceLogger } from './common/logging/service-logger';
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

/**
 * Nest answers an unknown route by throwing a NotFoundException through the exception filter: an Error, with
 * its stack trace, for every probe and scan. This adapter answers it directly with the same envelope: 404 for
 * an unknown path, 405 with `Allow` for a method the path does not answer (TRACE included).
 */
class ServiceFastifyAdapter extends FastifyAdapter {
  override setNotFoundHandler(): ReturnType<FastifyAdapter['setNotFoundHandler']> {
    return super.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
      const allowed = allowedMethods(this.getInstance(), request.url);
      const json = 'application/json; charset=utf-8';
      if (allowed.length > 0) {
        const error = `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`;
        const body: ErrorBody = { success: false, error };
        void reply.code(405).header('allow', allowed.join(', ')).header('content-type', json).send(body);
        return;
      }
      const body: ErrorBody = { success: false, error: `Cannot ${request.method} ${request.url}` };
      void reply.code(404).header('content-type', json).send(body);
    });
  }
}

export function createFastifyAdapter(trustProxySetting: string | undefined): FastifyAdapter {
  return new ServiceFastifyAdapter({
    // The largest body any route may take; each route's own limit is checked by the JSON parser.
    bodyLimit: MAX_BODY_BYTES,
    trustProxy: trustProxy(trustProxySetting),
    // Paths answer with or without the trailing slash the API contract writes (`/users/` and `/users`).
    // Signed link tokens travel in the path (`/unsubscribe/{token}`, tracking links): longer than Fastify's
    // default of 100 characters per parameter, still bounded (LinkTokens refuses more than 512).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    // The access line is written from our own hook (common/logging/access-log.ts), with this request id.
    logger: false,
    genReqId: requestId,
    requestIdHeader: false,
    // Stop accepting on close, but let in-flight requests finish.
    return503OnClosing: true,
    // A body that never arrives (a Content-Length larger than what is sent) ends with a 408, not a held
    // socket.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Router and HTTP-parser errors answer like every other error (envelope, security headers, request id).
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
}

/** Everything main.ts and the tests apply on top of AppModule, so both run the same pipeline. */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  app.useLogger(app.get(ServiceLogger));
  // Every answer carries helmet's security headers (computed once, see SECURITY_HEADERS: @fastify/helmet
  // would rebuild the same values on every request) and its request id. A route may override a header
  // (the unsubscribe page sets its own Content-Security-Policy); a direct route (the open pixel) sets its
  // own. Swagger UI gets a policy that works over plain http on any host (DOCS_SECURITY_HEADERS).
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!isDirectRoute(request)) {
      reply.headers(isDocsPage(request.url) ? DOCS_SECURITY_HEADERS : SECURITY_HEADERS);
    }
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  registerAccessLog(fastify, () => PinoLogger.root);
  // Before Nest adds its routes (at init), so each gets the hook that refuses a forged credential early.
  registerEarlyRefusal(fastify, app.get(EarlyRefusals));
  registerRequestScope(fastify);
  // After a clean shutdown the process exits 0 (Nest's default re-raises the signal: exit code 143).
  app.enableShutdownHooks([], { useProcessExit: true });
  app.enableCors({
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: [
      'Authorization',
      'Content-Type',
      'X-API-Key',
      'X-App-Key',
      'X-End-User-Token',
      'X-User-Id',
      'X-Request-Id',
    ],
    // A string, not a list: @fastify/cors joins a list again on every request.
    exposedHeaders: 'X-Request-Id, Retry-After',
    maxAge: 600,
  });
  registerBodyParsers(app);
  await app.register(multipart, { limits: MULTIPART_LIMITS });
  setupOpenApi(app);
  attachAuditTrail(app);
}
