import { BadRequestException, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CALLER_PROPERTY } from '../common/auth/auth-policy';
import type { EndUserPrincipal } from '../common/auth/end-user.decorator';
import { clientIp } from '../common/http/client-ip';

const USER_ID_HEADER = 'x-user-id';
const SAFE_USER_ID = /^[\w@.:+-]{1,128}$/;

/**
 * Who votes (docs/architecture.md "Wants"): the person signed in by magic link when the call carries their
 * end-user token (the guard verified it, for this app), else the end user the calling app names in
 * `X-User-Id`, else the client IP. The token wins over the header: it is a verified identity, the header only
 * the app's word, so the header is not read then. The prefixes keep the three kinds of voter from ever
 * colliding.
 */
export function voterIdOf(request: FastifyRequest): string {
  const endUser = (request as unknown as Record<string, EndUserPrincipal | undefined>)[
    CALLER_PROPERTY['end-user']
  ];
  if (endUser) return `person:${endUser.id}`;
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
