import { BadRequestException, PayloadTooLargeException, UnsupportedMediaTypeException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest, RawServerDefault } from 'fastify';
import { bodyPolicyOf, MAX_BODY_BYTES } from './body-policy';
import { bodyShapeProblem } from './body-shape';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

const mediaType = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();

/**
 * Content types: JSON on every route, `multipart/form-data` only where a route declares it (registered by
 * @fastify/multipart after this), nothing else: `application/x-www-form-urlencoded` and `text/plain`
 * answer 415, so a cross-site HTML form cannot post to a JSON route without a CORS preflight.
 *
 * Each JSON body is checked in this order before any validation runs: its declared length (413 before it
 * is read), its read length, strict UTF-8, JSON with prototype-poisoning refused, then its depth and field
 * count (400). So the worst a body can cost is one read and one bounded walk.
 */
export function registerBodyParsers(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Fastify's own JSON and text/plain parsers go; registering through Nest's useBodyParser also stops Nest
  // from adding its JSON and urlencoded ones at init.
  fastify.removeAllContentTypeParsers();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');

  app.useBodyParser<RawServerDefault>(
    'application/json',
    { bodyLimit: MAX_BODY_BYTES },
    (request, body: Buffer, done) => {
      const policy = bodyPolicyOf(request);
      if (body.length > policy.maxBytes) return done(tooLarge(policy.maxBytes), undefined);
      let text: string;
      try {
        text = strictUtf8.decode(body);
      } catch {
        return done(new BadRequestException('Request body is not valid UTF-8'), undefined);
      }
      parseJson(request, text, (error, parsed: unknown) => {
        if (error) return done(error, undefined);
        const problem = bodyShapeProblem(parsed, policy.maxFields, policy.maxDepth);
        if (problem) return done(new BadRequestException(problem), undefined);
        if (policy.rawBody) (request as FastifyRequest & { rawBody?: Buffer }).rawBody = body;
        done(null, parsed);
      });
    },
  );

  // Decided from the headers alone, before a byte of the body is read.
  fastify.addHook('onRequest', async (request) => {
    const policy = bodyPolicyOf(request);
    const type = mediaType(request);
    if (type === 'multipart/form-data') {
      if (!policy.multipart)
        throw new UnsupportedMediaTypeException('This route does not take multipart/form-data');
      if (!/;\s*boundary=/i.test(request.headers['content-type'] ?? '')) {
        throw new BadRequestException('multipart/form-data needs a boundary parameter');
      }
      return;
    }
    const declared = Number(request.headers['content-length']);
    if (declared > policy.maxBytes) throw tooLarge(policy.maxBytes);
  });
}

function tooLarge(maxBytes: number): PayloadTooLargeException {
  return new PayloadTooLargeException(`Request body is too large (at most ${maxBytes} bytes on this route)`);
}
