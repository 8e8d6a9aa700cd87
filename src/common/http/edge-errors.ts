import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorBody } from './envelope';

/** Swagger UI at /docs needs inline styles and scripts; helmet adds its other defaults to these. */
const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  scriptSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
};

/** The security headers of every response. */
export const HELMET_OPTIONS: HelmetOptions = { contentSecurityPolicy: { directives: CSP_DIRECTIVES } };

/** helmet's headers for `options`, collected once by running its middleware on a stand-in response. */
function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => (headers[name.toLowerCase()] = String(value)),
    removeHeader: () => undefined,
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, () => undefined);
  return headers;
}

/**
 * The headers helmet sets with HELMET_OPTIONS. Every answer carries them: ordinary ones from an onRequest
 * hook (app.setup.ts), the answers below directly, since they are written before (or without) Fastify's
 * hooks. They do not depend on the request, so computing them once replaces @fastify/helmet's per-request
 * run of the same middleware.
 */
export const SECURITY_HEADERS = helmetHeaders(HELMET_OPTIONS);

/**
 * Swagger UI's headers (`/docs` and its scripts and styles): the same, without helmet's
 * `upgrade-insecure-requests`. A browser obeys it on a page served over plain http from any host it does not
 * count as trustworthy (an intranet name or address, not localhost or 127.0.0.1), and fetches the UI's
 * scripts and styles over https, where nothing answers: a blank page
 * (docs/decisions/security-swagger-ui-csp.md).
 */
export const DOCS_SECURITY_HEADERS = helmetHeaders({
  contentSecurityPolicy: {
    directives: { ...CSP_DIRECTIVES, upgradeInsecureRequests: null },
  },
});

/** Swagger UI's pages: `/docs`, `/docs/` and the files below it (not `/docs-json`, which is JSON). */
export function isDocsPage(url: string): boolean {
  return /^\/docs(?:[/?#]|$)/.test(url);
}

const envelope = (error: string) => JSON.stringify({ success: false, error } satisfies ErrorBody);

/**
 * The longest path segment the router takes (longer: 414). Signed link tokens travel in paths, so this is
 * above Fastify's default of 100.
 */
export const MAX_PATH_SEGMENT = 600;

/**
 * Errors of Fastify's router, raised before any hook runs: a path that does not decode (`/tickets/%zz`, 400)
 * and a path segment over 600 characters (414; see `maxParamLength` in app.setup.ts). Answered like every
 * other error.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  void reply
    .code(tooLong ? 414 : 400)
    .headers({
      ...SECURITY_HEADERS,
      'x-request-id': request.id,
      'content-type': 'application/json; charset=utf-8',
    })
    .send(
      envelope(tooLong ? `A path segment is longer than ${MAX_PATH_SEGMENT} characters` : 'Malformed URL'),
    );
}

const CLIENT_ERRORS: Record<string, [status: number, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request was not received in time'],
};

/**
 * Requests Node's HTTP parser refuses (oversized headers, a malformed or contradictory Content-Length,
 * garbage instead of HTTP, a body that never arrives): no request object exists, so the answer is written
 * on the socket, still as the envelope with the security headers and a request id.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Malformed HTTP request'];
  const body = envelope(message);
  const headers = {
    ...SECURITY_HEADERS,
    'x-request-id': randomUUID(),
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  if (socket.writable) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
