import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';

/**
 * Structured JSON logs, one line per request with its id (Fastify's request id, see app.setup.ts);
 * credentials never reach the log.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) => ({
        pinoHttp: {
          level: config.get('LOG_LEVEL', { infer: true }),
          redact: {
            paths: [
              'req.headers.authorization',
              'req.headers["x-api-key"]',
              'req.headers["x-app-key"]',
              'req.headers.cookie',
              'req.headers["webhook-signature"]',
            ],
            censor: '[redacted]',
          },
          customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
        },
      }),
    }),
  ],
})
export class LoggingModule {}
