import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AUTH_POLICY, AuthPolicy } from '../common/auth/auth-policy';
import type { AuthenticatedRequest } from '../common/auth/current-user.decorator';
import { Access, roleMayAccess } from '../common/auth/roles';
import { displayName, UsersService } from '../users/users.service';
import { TokenService } from './token.service';

/** What an undecorated route gets: deny by default (admins only), and the role × route test flags it. */
const DEFAULT_POLICY: AuthPolicy = { credential: 'bearer', access: Access.Admin };

/**
 * The global guard. Public routes pass; routes that name another credential are checked by that
 * credential's own guard; every other route needs a valid bearer token of an active user whose token
 * version still matches, and a role the route's access level allows.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenService,
    private readonly users: UsersService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy =
      this.reflector.getAllAndOverride<AuthPolicy>(AUTH_POLICY, [context.getHandler(), context.getClass()]) ??
      DEFAULT_POLICY;
    if (policy.credential !== 'bearer') return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = /^Bearer ([\w-]+\.[\w-]+\.[\w-]*)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!token) throw new UnauthorizedException('Missing bearer token');

    const claims = await this.tokens.verify(token);
    const user = claims && (await this.users.findTokenSubject(claims.sub));
    if (!claims || !user || !user.isActive || (user.tokenVersion ?? 0) !== claims.tv) {
      throw new UnauthorizedException('Invalid or expired token');
    }
    request.user = { id: String(user._id), email: user.email, name: displayName(user), role: user.role };

    if (!roleMayAccess(user.role, policy.access)) {
      throw new ForbiddenException('Your role does not allow this operation');
    }
    return true;
  }
}
