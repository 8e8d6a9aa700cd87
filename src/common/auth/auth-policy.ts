import type { Access } from './roles';

/**
 * Every route declares how it is authenticated through one composed decorator, which stores this policy.
 * The global guard reads it; a route without one is treated as an admin-only bearer route, and the
 * role × route test fails until the route gets an explicit decision.
 */
export type AuthPolicy =
  | { credential: 'none' }
  | { credential: 'bearer'; access: Access }
  | { credential: 'api-key' }
  | { credential: 'app-key' }
  | { credential: 'webhook-signature' };

export const AUTH_POLICY = 'auth:policy';
