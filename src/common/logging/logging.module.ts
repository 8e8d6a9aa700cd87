import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../../config/env';
import { LifecycleLog } from './lifecycle-log';
import { resolveLogFormat } from './log-format';
import { loggerParams } from './log-stream';
import { ServiceLogger } from './service-logger';

/** Structured logs through nestjs-pino: JSON lines, or readable lines at a terminal (LOG_FORMAT). */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) =>
        loggerParams(
          config.get('LOG_LEVEL', { infer: true }),
          resolveLogFormat(
            config.get('LOG_FORMAT', { infer: true }),
            config.get('NODE_ENV', { infer: true }),
          ),
        ),
    }),
  ],
  providers: [ServiceLogger, LifecycleLog],
  exports: [ServiceLogger],
})
export class LoggingModule {}
