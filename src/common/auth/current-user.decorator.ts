import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Role } from './roles';

/** The signed-in back-office user, as the bearer guard resolved it (current role from the database). */
export interface AuthUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

export type AuthenticatedRequest = FastifyRequest & { user?: AuthUser };

export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthUser => {
  const user = context.switchToHttp().getRequest<AuthenticatedRequest>().user;
  if (!user) throw new Error('CurrentUser used on a route without a bearer policy');
  return user;
});
