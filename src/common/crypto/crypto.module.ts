import { Global, Module } from '@nestjs/common';
import { LinkTokens } from './link-token';

/** Signing helpers every area may use (keys come from the global SecretKeys). */
@Global()
@Module({ providers: [LinkTokens], exports: [LinkTokens] })
export class CryptoModule {}
