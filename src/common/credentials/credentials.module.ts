import { Global, Module } from '@nestjs/common';
import { CredentialChecks } from '../auth/credential-checks';
import { EarlyRefusals } from '../auth/early-refusal';
import { CredentialChanges } from './credential-changes';

/**
 * The credential caches' change stamps, for every strategy and every service that revokes; each credential's
 * check, which its strategy registers and the guard runs; the refusals answered before Nest, which the
 * strategies supply and the guard teaches routes to.
 */
@Global()
@Module({
  providers: [CredentialChanges, CredentialChecks, EarlyRefusals],
  exports: [CredentialChanges, CredentialChecks, EarlyRefusals],
})
export class CredentialsModule {}
