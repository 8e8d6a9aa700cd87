import { BadRequestException, PayloadTooLargeException, UnsupportedMediaTypeException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest, RawServerDefault } from 'fastify';
import secureJson from 'secure-json-parse';
import { type BodyPolicy, bodyPolicyOf, MAX_BODY_BYTES } from './body-policy';
import { bodyShapeProblem } from './body-shape';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

const mediaType = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();

/**
 * Content types: JSON on every route, `multipart/form-data` and `application/x-www-form-urlencoded` only
 * where a route declares them (multipart is registered by @fastify/multipart after this), `text/plain` only
 * on a signed webhook that keeps its raw body (SNS), nothing else:
 * elsewhere a form or `text/plain` answers 415, so a cross-site HTML form cannot post to a JSON route
 * without a CORS preflight.
 *
 * Each JSON body is checked in this order before any validation runs: its declared length (413 before it
 * is read), its read length, strict UTF-8, JSON with prototype-poisoning keys refused, then its depth and
 * field count (400). So the worst a body can cost is one read and one bounded walk. A route that keeps its
 * raw body (a signed webhook) is only read here: its signature is checked before these steps run.
 */
export function registerBodyParsers(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Fastify's own JSON and text/plain parsers go; registering through Nest's useBodyParser also stops Nest
  // from adding its JSON and urlencoded ones at init.
  fastify.removeAllContentTypeParsers();

  const parsers = [
    ['application/json', parseJsonBody],
    ['application/x-www-form-urlencoded', parseFormBody],
    ['text/plain', keepSignedText],
  ] as const;
  for (const [contentType, parse] of parsers) {
    app.useBodyParser<RawServerDefault>(
      contentType,
      { bodyLimit: MAX_BODY_BYTES },
      (request, body: Buffer, done) => {
        try {
          done(null, parse(request, body));
        } catch (error) {
          done(error as Error, undefined);
        }
      },
    );
  }

  // Decided from the headers alone, before a byte of the body is read.
  fastify.addHook('onRequest', (request, _reply, done) => done(headerProblem(request)));
}

/** The body as text within the route's size limit (413), strictly UTF-8 (400). */
function bodyText(body: Buffer, policy: BodyPolicy): string {
  if (body.length > policy.maxBytes) throw tooLarge(policy.maxBytes);
  try {
    return strictUtf8.decode(body);
  } catch {
    throw new BadRequestException('Request body is not valid UTF-8');
  }
}

/**
 * The parsed body, or the 400/413 that refuses it. A route that keeps its raw body gets its bytes only
 * (within its size limit); its credential parses them with `parseJsonBytes` once it trusts them.
 */
function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  const policy = bodyPolicyOf(request);
  if (policy.rawBody) {
    if (body.length > policy.maxBytes) throw tooLarge(policy.maxBytes);
    (request as FastifyRequest & { rawBody?: Buffer }).rawBody = body;
    return undefined;
  }
  return parseJsonBytes(body, policy);
}

/**
 * `text/plain` only where a route keeps its raw body: Amazon SNS posts its signed JSON under that type. The
 * route's credential checks and parses the bytes; everywhere else `text/plain` stays a 415.
 */
function keepSignedText(request: FastifyRequest, body: Buffer): unknown {
  if (!bodyPolicyOf(request).rawBody) {
    throw new UnsupportedMediaTypeException('This route does not take text/plain');
  }
  return parseJsonBody(request, body);
}

/**
 * JSON bytes as every JSON route takes them: size, strict UTF-8, no poisoning keys, bounded shape (400/413).
 */
export function parseJsonBytes(body: Buffer, policy: BodyPolicy): unknown {
  const parsed = parseJson(bodyText(body, policy));
  const problem = bodyShapeProblem(parsed, policy.maxFields, policy.maxDepth);
  if (problem) throw new BadRequestException(problem);
  return parsed;
}

/**
 * A form body as an object of strings (a repeated name keeps its first value). Names and values stay data:
 * the object has no prototype, so `__proto__` is an ordinary key.
 */
function parseFormBody(request: FastifyRequest, body: Buffer): Record<string, string> {
  const policy = bodyPolicyOf(request);
  const text = bodyText(body, policy);
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > policy.maxFields) {
      throw new BadRequestException(`Request body has too many fields (at most ${policy.maxFields})`);
    }
    if (!(name in fields)) fields[name] = value;
  }
  return fields;
}

/**
 * A body refused by what its headers say: multipart where the route takes none, or a length over its limit.
 */
function headerProblem(request: FastifyRequest): Error | undefined {
  // Most requests (GET, DELETE) declare no body: nothing to check, and no route policy to read.
  const { 'content-type': contentType, 'content-length': contentLength } = request.headers;
  if (contentType === undefined && contentLength === undefined) return undefined;
  const policy = bodyPolicyOf(request);
  if (mediaType(request) === 'application/x-www-form-urlencoded' && !policy.form) {
    return new UnsupportedMediaTypeException('This route does not take application/x-www-form-urlencoded');
  }
  if (mediaType(request) === 'multipart/form-data') {
    if (!policy.multipart) {
      return new UnsupportedMediaTypeException('This route does not take multipart/form-data');
    }
    if (!/;\s*boundary=/i.test(request.headers['content-type'] ?? '')) {
      return new BadRequestException('multipart/form-data needs a boundary parameter');
    }
    return undefined;
  }
  const declared = Number(request.headers['content-length']);
  return declared > policy.maxBytes ? tooLarge(policy.maxBytes) : undefined;
}

/** JSON with `__proto__` and `constructor.prototype` keys refused (prototype poisoning), as Fastify does. */
function parseJson(text: string): unknown {
  if (text.trim() === '') {
    throw new BadRequestException('Body cannot be empty when content-type is application/json');
  }
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    // secure-json-parse reports poisoning as a SyntaxError too ("Object contains forbidden prototype
    // property").
    const poisoned = error instanceof Error && error.message.includes('forbidden prototype');
    throw new BadRequestException(
      poisoned ? 'Request body contains a forbidden property name' : 'Malformed JSON in request body',
    );
  }
}

function tooLarge(maxBytes: number): PayloadTooLargeException {
  return new PayloadTooLargeException(`Request body is too large (at most ${maxBytes} bytes on this route)`);
}
