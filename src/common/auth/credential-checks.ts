import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Credential } from './auth-policy';

/**
 * A credential's check: the caller the request proves to be, or the 401/403 (an HttpException with its
 * precise message) that it throws.
 */
export type CredentialCheck = (request: FastifyRequest) => Promise<unknown>;

/**
 * The check of each credential, registered by the strategy that owns it (beside the service that verifies
 * it) and run by the CredentialGuard, which imports no feature module: the credential's name is the link.
 * One registry per application, so two applications in one process never share a strategy
 * (docs/decisions/auth-credential-checks-without-passport.md).
 */
@Injectable()
export class CredentialChecks {
  private readonly checks = new Map<Credential, CredentialCheck>();

  register(credential: Credential, check: CredentialCheck): void {
    if (this.checks.has(credential)) throw new Error(`The ${credential} credential has two checks`);
    this.checks.set(credential, check);
  }

  /** The caller `request` proves to be with `credential`; throws the strategy's 401/403. */
  verify(credential: Credential, request: FastifyRequest): Promise<unknown> {
    const check = this.checks.get(credential);
    // A route of a credential whose module is not in the application: an error of ours (500), never a pass.
    if (!check) return Promise.reject(new Error(`No check is registered for the ${credential} credential`));
    return check(request);
  }
}
