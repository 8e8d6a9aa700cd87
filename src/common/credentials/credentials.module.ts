import { Global, Module } from '@nestjs/common';
import { CredentialChanges } from './credential-changes';

/** The credential caches' change stamps, for every strategy and every service that revokes. */
@Global()
@Module({ providers: [CredentialChanges], exports: [CredentialChanges] })
export class CredentialsModule {}
