import { Module } from '@nestjs/common';
import { LoggerModule, type Params } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';

/**
 * The logger's options at `level`; tests pass a `destination` to read the lines the production options
 * write (pino writes to stdout otherwise).
 */
export function loggerParams(level: AppConfig['LOG_LEVEL'], destination?: DestinationStream): Params {
  const options = {
    level,
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
    customLogLevel: (_req: unknown, res: { statusCode: number }, err?: Error) =>
      err || res.statusCode >= 500 ? ('error' as const) : ('info' as const),
  };
  return { pinoHttp: destination ? [options, destination] : options };
}

/**
 * Structured JSON logs, one line per request with its id (Fastify's request id, see app.setup.ts);
 * credentials never reach the log.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) =>
        loggerParams(config.get('LOG_LEVEL', { infer: true })),
    }),
  ],
})
export class LoggingModule {}
