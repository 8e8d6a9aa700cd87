import type { FastifyInstance, FastifyRequest } from 'fastify';
import { inRequestScope } from '../database/request-time-limit';

/**
 * Every request runs its hooks and handler in the request scope, so its queries carry the request time
 * limit. Entered again before validation: a body arrives on the socket's events, outside the scope entered
 * when the request began.
 */
export function registerRequestScope(fastify: FastifyInstance): void {
  const enter = (_request: FastifyRequest, _reply: unknown, done: () => void) => inRequestScope(done);
  fastify.addHook('onRequest', enter);
  fastify.addHook('preValidation', enter);
}
