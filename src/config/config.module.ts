import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { AppConfig, validateEnv } from './env';
import { SecretKeys } from './secret-keys';

/**
 * Configuration through `@nestjs/config`: `.env` (when present) is merged under the process environment and
 * validated by the `Env` class, so a bad value stops start-up naming the variable. Global: every module may
 * inject `ConfigService<AppConfig, true>` and the derived `SecretKeys`.
 */
@Module({})
export class AppConfigModule {
  /**
   * Called when the application is assembled, not when a file is imported, so each build (a test file
   * builds several) validates the environment as it is at that moment.
   */
  static async forRoot(): Promise<DynamicModule> {
    const config = await ConfigModule.forRoot({ isGlobal: true, cache: true, validate: validateEnv });
    return {
      module: AppConfigModule,
      global: true,
      imports: [config],
      providers: [
        {
          provide: SecretKeys,
          inject: [ConfigService],
          useFactory: (settings: ConfigService<AppConfig, true>) =>
            new SecretKeys(settings.get('APP_SECRET', { infer: true })),
        },
      ],
      exports: [SecretKeys],
    };
  }
}
