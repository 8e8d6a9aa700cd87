import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { CredentialChanges } from '../credentials/credential-changes';
import type { ErrorBody } from '../http/envelope';
import { rememberReason } from '../logging/access-log';
import type { AuthPolicy, Credential } from './auth-policy';

/**
 * The 401 message of a request whose credential is refused for certain without any I/O (a missing header, a
 * signature that does not match, a key already known to be nobody's), else null: the strategy decides.
 */
export type CertainRefusal = (request: FastifyRequest) => string | null;

interface Refuser {
  check: CertainRefusal;
  /** The check reads the credential cache: it waits, as the strategy would, until the cache is fresh. */
  readsCache: boolean;
}

/** What a route's hook knows of the route: its policy, once the guard has checked one of its requests. */
interface RouteSlot {
  policy?: AuthPolicy;
}

/**
 * Refuses a forged, malformed or unknown credential before Nest runs
 * (docs/decisions/auth-certain-refusals-before-nest.md): no throttler count, no guard, no exception and its
 * stack, no filter; the answer and its access line are the guard's own (the same status, message, reason).
 *
 * Each route gets a hook of its own, so a public route, an unknown path and a route whose credential checks
 * out pay next to nothing. A route's policy is learned by the CredentialGuard at the route's first request
 * (the guard alone reads decorators, handler before controller), so this never guesses: a route not yet
 * seen, a public route, or a credential that may be valid (a signature that matches, a key not cached as
 * unknown) goes on to Nest and its strategy, which decides as it always did.
 */
@Injectable()
export class EarlyRefusals {
  private readonly refusers = new Map<Credential, Refuser>();
  /** Requests of routes whose policy is not known yet, with their route's slot: the guard's to fill. */
  private readonly unlearned = new WeakMap<FastifyRequest, RouteSlot>();

  constructor(private readonly changes: CredentialChanges) {}

  /** Called by a strategy for its credential; the check must agree with the strategy's own 401s. */
  register(credential: Credential, check: CertainRefusal, { readsCache = false } = {}): void {
    this.refusers.set(credential, { check, readsCache });
  }

  /** Called by the guard on each request it checks: one of a route not known yet teaches its policy. */
  learn(request: FastifyRequest, policy: AuthPolicy): void {
    const slot = this.unlearned.get(request);
    if (slot) slot.policy = policy;
  }

  /** The onRequest hook of one route. */
  routeHook(): onRequestHookHandler {
    const slot: RouteSlot = {};
    return (request, reply, done) => {
      const policy = slot.policy;
      if (policy === undefined) this.unlearned.set(request, slot);
      const refuser =
        policy && policy.credential !== 'none' ? this.refusers.get(policy.credential) : undefined;
      if (!refuser) {
        done();
        return;
      }
      // Once a second at most (shared by every request): the same read the strategy would wait for. When it
      // fails, the strategy decides (and answers the database's unavailability).
      const pending = refuser.readsCache ? this.changes.current() : null;
      if (!pending) {
        answer(refuser.check, request, reply, done);
        return;
      }
      pending.then(
        () => answer(refuser.check, request, reply, done),
        () => done(),
      );
    };
  }
}

/** Refuses the request when its credential is certainly wrong, else lets it go on. */
function answer(check: CertainRefusal, request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const error = check(request);
  if (error === null) {
    done();
    return;
  }
  rememberReason(request, 401, error);
  const body: ErrorBody = { success: false, error };
  void reply.code(401).header('content-type', JSON_CONTENT).send(body);
}

const JSON_CONTENT = 'application/json; charset=utf-8';

/**
 * Gives every route its hook as the route is added. A route's own hooks run after the instance's, so the
 * security headers, request id and CORS headers are on a refusal as on any answer.
 */
export function registerEarlyRefusal(fastify: FastifyInstance, refusals: EarlyRefusals): void {
  fastify.addHook('onRoute', (route) => {
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [...own, refusals.routeHook()];
  });
}
