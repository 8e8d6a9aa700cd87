import { type CanActivate, type ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { AUTH_POLICY, type AuthPolicy, CALLER_PROPERTY } from './auth-policy';
import { bearerToken } from './bearer-token';
import { CredentialChecks } from './credential-checks';
import { EarlyRefusals } from './early-refusal';
import { offersEndUserToken } from './end-user-token';
import type { AuthUser } from './current-user.decorator';
import { Access, roleMayAccess } from './roles';
import { TWO_FACTOR_ENROLMENT } from './two-factor-enrolment.decorator';

export const TWO_FACTOR_SETUP_FIRST =
  'Your role requires two-factor sign-in: set it up with POST /auth/2fa/setup and POST /auth/2fa/enable first';

/** What an undecorated route gets: deny by default (admins only), and the role × route test flags it. */
const DEFAULT_POLICY: AuthPolicy = { credential: 'bearer', access: Access.Admin };

type RequestWithHeaders = Record<string, unknown> & {
  headers: Record<string, string | string[] | undefined>;
};

/**
 * A well-formed token that fails verification, an Authorization header that holds no bearer JWT at all
 * (`Bearer garbage`, another scheme), or no header: three answers, so a caller can tell a typo from a session
 * that ended.
 */
export function bearerRefusal(request: Pick<RequestWithHeaders, 'headers'>): string {
  if (bearerToken(request)) return 'Invalid or expired token';
  return request.headers.authorization === undefined ? 'Missing bearer token' : INVALID_BEARER_TOKEN;
}

/** The 401 of an Authorization header that is not `Bearer <jwt>`. */
export const INVALID_BEARER_TOKEN = 'Invalid bearer token: expected Authorization: Bearer <jwt>';

/**
 * The one authentication guard (registered as APP_GUARD after the throttler): reads the route's policy,
 * lets `@Public()` routes through, and runs the check of every other credential (and of an end-user token
 * on API-key routes that take one as an optional second credential), storing the caller it proves under
 * the credential's property. Bearer routes then check the user's role against the route's access level
 * (403). The strategies register their checks beside the services that verify them (CredentialChecks);
 * this guard needs none of those modules.
 */
@Injectable()
export class CredentialGuard implements CanActivate {
  /** Each route's policy, read from its metadata at its first request (decorators do not change later). */
  private readonly policies = new WeakMap<object, Map<object, AuthPolicy>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly refusals: EarlyRefusals,
    private readonly checks: CredentialChecks,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy = this.policyOf(context);
    const request = context.switchToHttp().getRequest<FastifyRequest & Record<string, unknown>>();
    this.refusals.learn(request, policy);
    if (policy.credential === 'none') return true;

    request[CALLER_PROPERTY[policy.credential]] = await this.checks.verify(policy.credential, request);

    // A second credential the route takes when sent: checked like any other (never ignored when invalid);
    // a back-office token in Authorization is not one (see offersEndUserToken).
    if (policy.credential === 'api-key' && policy.endUser === 'optional' && offersEndUserToken(request)) {
      request[CALLER_PROPERTY['end-user']] = await this.checks.verify('end-user', request);
    }

    if (policy.credential === 'bearer') {
      const user = request[CALLER_PROPERTY.bearer] as AuthUser;
      if (!roleMayAccess(user.role, policy.access)) {
        throw new ForbiddenException('Your role does not allow this operation');
      }
      if (user.twoFactorSetupRequired && !this.isEnrolmentRoute(context)) {
        throw new ForbiddenException(TWO_FACTOR_SETUP_FIRST);
      }
    }
    return true;
  }

  private isEnrolmentRoute(context: ExecutionContext): boolean {
    return this.reflector.get<boolean | undefined>(TWO_FACTOR_ENROLMENT, context.getHandler()) === true;
  }

  /** The route's policy (the handler's, else its controller's), or the default: admins only. */
  private policyOf(context: ExecutionContext): AuthPolicy {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byController = this.policies.get(handler);
    if (!byController) this.policies.set(handler, (byController = new Map<object, AuthPolicy>()));
    let policy = byController.get(controller);
    if (!policy) {
      policy =
        this.reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [handler, controller]) ??
        DEFAULT_POLICY;
      byController.set(controller, policy);
    }
    return policy;
  }
}
