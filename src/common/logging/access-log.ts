import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { clientIp } from '../http/client-ip';
import { withoutAddresses } from './redact-addresses';

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

/** Enough for "email must be an email; password must be longer than or equal to 8 characters". */
const MAX_REASON = 160;
const URL_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;
const CONTROL = /[\u0000-\u001f\u007f]+/g;
/** The upload errors name the client's file (`files: CV of Jane Doe.pdf is empty`); the log names none. */
const FILE_NAME = /^files: .+? (is empty|is larger than)/;

/** The error of each 4xx answer, from the exception filter to the access line (shortened only if written). */
const reasons = new WeakMap<FastifyRequest, string>();

/**
 * A 4xx answer's error as its access line shows it. The messages are the service's own (field names and
 * rules, never the values); what one may still quote is taken out: e-mail addresses, URLs (they can carry
 * tokens), the client's file names, control characters; and it is cut short.
 */
export function shortReason(error: string): string {
  const reason = withoutAddresses(error)
    .replace(URL_TEXT, '[url]')
    .replace(FILE_NAME, 'files: [file] $1')
    .replace(CONTROL, ' ');
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}…` : reason;
}

/**
 * Keeps a 4xx answer's reason for its access line, so an operator sees why a request was refused without
 * asking the client. A 404 of an unknown route keeps none: Nest's text repeats the URL, query included.
 */
export function rememberReason(request: FastifyRequest, status: number, error: string): void {
  if (status < 400 || status >= 500 || request.routeOptions.url === undefined) return;
  reasons.set(request, error);
}

function reasonOf(request: FastifyRequest): string | undefined {
  const error = reasons.get(request);
  return error === undefined ? undefined : shortReason(error);
}

/** What names a request in a log line written about it (the exception filter's, the access line). */
export function requestFacts(request: FastifyRequest) {
  return { reqId: request.id, method: request.method, route: routeOf(request) };
}

/**
 * One access line: request id, method, route, status, duration, client and, for a 4xx, the short reason
 * (`clientIp`: behind TRUST_PROXY, the forwarded one). A literal object of one shape: every line is built the
 * same way, and pino walks it once.
 */
export function accessFields(request: FastifyRequest, status: number, elapsedMs: number) {
  return {
    reqId: request.id,
    method: request.method,
    route: routeOf(request),
    status,
    ms: Math.round(elapsedMs * 10) / 10,
    client: clientIp(request),
    // Only 4xx answers have one; pino leaves an undefined field out of the line.
    reason: reasonOf(request),
  };
}

/**
 * Writes the access line from Fastify's own hooks, once the answer is sent (or the client has gone). `logger`
 * is read per line: nestjs-pino creates its root logger when the application starts, after these hooks exist.
 */
export function registerAccessLog(fastify: FastifyInstance, logger: () => Logger): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const level = status >= 500 ? 'error' : 'info';
    const log = logger();
    // The fields cost a client-address resolution and a route lookup: not built for a line never written.
    if (log.isLevelEnabled(level)) {
      log[level](accessFields(request, status, reply.elapsedTime), 'request completed');
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    const log = logger();
    if (log.isLevelEnabled('info')) {
      log.info(accessFields(request, CLIENT_CLOSED_REQUEST, 0), 'request aborted');
    }
    done();
  });
}
