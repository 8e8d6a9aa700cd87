import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { clientIp } from '../http/client-ip';

/** nginx's "client closed request", as the exception filter answers an aborted body. */
const CLIENT_CLOSED_REQUEST = 499;

/** Unmatched paths are logged (scans show up) but cut short: the path is the client's text. */
const MAX_UNMATCHED_PATH = 200;

/**
 * The route pattern, not the URL: URLs carry link tokens (`/unsubscribe/{token}`, `/o/{token}.gif`, the
 * `?token=` of magic links) that must not reach the logs. An unknown route logs its path without the query.
 */
function routeOf(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  if (route !== undefined) return route;
  const path = request.url.split('?', 1)[0];
  return `(unmatched) ${path.length > MAX_UNMATCHED_PATH ? `${path.slice(0, MAX_UNMATCHED_PATH)}…` : path}`;
}

/** What names a request in a log line written about it (the exception filter's, the access line). */
export function requestFacts(request: FastifyRequest) {
  return { reqId: request.id, method: request.method, route: routeOf(request) };
}

/**
 * One access line: request id, method, route, status, duration and client (`clientIp`: behind TRUST_PROXY,
 * the forwarded one). A literal object of one shape: every line is built the same way, and pino walks it once.
 */
export function accessFields(request: FastifyRequest, status: number, elapsedMs: number) {
  return {
    reqId: request.id,
    method: request.method,
    route: routeOf(request),
    status,
    ms: Math.round(elapsedMs * 10) / 10,
    client: clientIp(request),
  };
}

/**
 * Writes the access line from Fastify's own hooks, once the answer is sent (or the client has gone). `logger`
 * is read per line: nestjs-pino creates its root logger when the application starts, after these hooks exist.
 */
export function registerAccessLog(fastify: FastifyInstance, logger: () => Logger): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    logger()[status >= 500 ? 'error' : 'info'](
      accessFields(request, status, reply.elapsedTime),
      'request completed',
    );
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    logger().info(accessFields(request, CLIENT_CLOSED_REQUEST, 0), 'request aborted');
    done();
  });
}
