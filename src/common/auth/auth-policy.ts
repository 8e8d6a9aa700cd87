import type { Access } from './roles';

/**
 * Every route declares how it is authenticated through one composed decorator, which stores this policy.
 * The global CredentialGuard reads it and runs the check of the same name (CredentialChecks); a route
 * without one is treated as an admin-only bearer route, and the role × route test fails until it gets a
 * decision.
 */
export type AuthPolicy =
  | { credential: 'none' }
  | { credential: 'bearer'; access: Access }
  | {
      credential: 'api-key';
      /**
       * `optional`: an end-user token, when offered (`X-End-User-Token`, or an `Authorization` header that
       * is not a back-office token), must also be valid and of the path's app (the `end-user` strategy runs
       * after the key's); absent, the key alone suffices.
       */
      endUser?: 'optional';
    }
  | { credential: 'app-key' }
  | { credential: 'webhook-signature' }
  | { credential: 'end-user' };

export const AUTH_POLICY = 'auth:policy';

/** The credentials that need checking; each is the name of the check its strategy registers. */
export type Credential = Exclude<AuthPolicy['credential'], 'none'>;

/**
 * Where the guard puts what a strategy returned on the request (the parameter decorators read it there).
 * `clientApp`, not `app`, and `apiKey`, not `key`: the request object's own names stay untouched.
 */
export const CALLER_PROPERTY = {
  bearer: 'user',
  'api-key': 'apiKey',
  'app-key': 'clientApp',
  'webhook-signature': 'webhook',
  'end-user': 'endUser',
} as const satisfies Record<Credential, string>;
