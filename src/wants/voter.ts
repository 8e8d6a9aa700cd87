import { BadRequestException, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { clientIp } from '../common/http/client-ip';

const USER_ID_HEADER = 'x-user-id';
const SAFE_USER_ID = /^[\w@.:+-]{1,128}$/;

/**
 * Who votes: the end user the calling app names in `X-User-Id`, else the client IP. The prefixes keep an
 * end user id from ever colliding with an IP.
 */
export function voterIdOf(request: FastifyRequest): string {
  const header = request.headers[USER_ID_HEADER];
  if (header === undefined) return `ip:${clientIp(request)}`;
  if (typeof header !== 'string' || !SAFE_USER_ID.test(header)) {
    throw new BadRequestException('X-User-Id must be 1 to 128 characters of letters, digits and @ . : + - _');
  }
  return `user:${header}`;
}

export const Voter = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  voterIdOf(context.switchToHttp().getRequest<FastifyRequest>()),
);
