import { Global, Module } from '@nestjs/common';
import { EarlyRefusals } from '../auth/early-refusal';
import { CredentialChanges } from './credential-changes';

/**
 * The credential caches' change stamps, for every strategy and every service that revokes; the refusals
 * answered before Nest, which the strategies supply and the guard teaches routes to.
 */
@Global()
@Module({ providers: [CredentialChanges, EarlyRefusals], exports: [CredentialChanges, EarlyRefusals] })
export class CredentialsModule {}
