import { SetMetadata } from '@nestjs/common';
import { AUTH_POLICY, AuthPolicy } from './auth-policy';

/** Marks a route that needs no credential (the global guard denies everything else by default). */
export const Public = () => SetMetadata(AUTH_POLICY, { credential: 'none' } satisfies AuthPolicy);
