import type { FastifyRequest } from 'fastify';

/** The caller's IP as Fastify resolved it (honours TRUST_PROXY, ignores X-Forwarded-For otherwise). */
export const clientIp = (request: FastifyRequest): string => request.ip;
