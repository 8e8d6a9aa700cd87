import { Global, Module } from '@nestjs/common';
import { Env, loadEnv } from './env';

/**
 * Provides the validated environment as the typed `Env` instance. Modules inject `Env` instead of reading
 * `process.env`, so every value is the validated, defaulted one.
 */
@Global()
@Module({
  providers: [{ provide: Env, useFactory: loadEnv }],
  exports: [Env],
})
export class ConfigModule {}
