import type { Params } from 'nestjs-pino';
import { destination as fileDestination, type DestinationStream, type LogFn, type LoggerOptions } from 'pino';
import type { AppConfig } from '../../config/env';
import { type BootLogger, createBootLogger } from './boot-logger';
import { type LogFormat, prettyStream, resolveLogFormat } from './log-format';
import { argsWithoutAddresses, errWithoutAddresses } from './redact-addresses';

let isoTimeMs = -1;
let isoTimeField = '';

/**
 * pino's `isoTime`, formatted once per millisecond: under load many lines share a millisecond, and
 * formatting a date is a good part of what writing a line costs.
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== isoTimeMs) {
    isoTimeMs = now;
    isoTimeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return isoTimeField;
}

/**
 * Every logger of the process: ISO times, errors with their stack, and no e-mail address in a message or an
 * error (see redact-addresses.ts; the lines we write ourselves name ids already).
 */
function loggerOptions(level: AppConfig['LOG_LEVEL']): LoggerOptions {
  return {
    level,
    timestamp: isoTime,
    serializers: { err: errWithoutAddresses },
    hooks: {
      logMethod(args, method) {
        method.apply(this, argsWithoutAddresses(args) as Parameters<LogFn>);
      },
    },
  };
}

let processStream: { format: LogFormat; stream: DestinationStream } | undefined;

/**
 * The process's one log stream, shared by the boot logger and nestjs-pino's so their lines keep their order.
 * JSON lines go to stdout synchronously (pino's default): a line is out before the next statement runs, so
 * none is lost when the process ends, however it ends. An asynchronous stream measured no cheaper per line
 * here (the write moves to a thread, the system call stays) and lost the lines still in flight when Nest
 * ends a shutdown by re-raising the signal.
 */
function logStream(format: LogFormat): DestinationStream {
  if (processStream?.format !== format) {
    const stream = format === 'pretty' ? prettyStream() : fileDestination({ dest: 1, sync: true });
    processStream = { format, stream };
  }
  return processStream.stream;
}

/**
 * nestjs-pino's options. Tests pass a `destination` to read the lines.
 *
 * No request middleware (`forRoutes: []`): pino-http would build two child loggers and a copy of the request
 * for every request, about a third of what an unknown route costs. The access line comes from Fastify's
 * hooks instead (access-log.ts), and the lines that matter during a request (errors) name its id.
 */
export function loggerParams(
  level: AppConfig['LOG_LEVEL'],
  format: LogFormat = 'json',
  destination?: DestinationStream,
): Params {
  return { pinoHttp: [loggerOptions(level), destination ?? logStream(format)], forRoutes: [] };
}

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * The logger for the time before the application's own exists (main.ts, worker.ts), from the environment
 * AppModule.forRoot validated; when validation itself failed, the defaults (to report that failure).
 */
export function bootLogger(env: NodeJS.ProcessEnv = process.env): BootLogger {
  const level = LEVELS.has(env.LOG_LEVEL ?? '') ? (env.LOG_LEVEL as AppConfig['LOG_LEVEL']) : 'info';
  const setting = env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty' ? env.LOG_FORMAT : 'auto';
  const nodeEnv = env.NODE_ENV === 'production' ? 'production' : 'development';
  return createBootLogger(loggerOptions(level), logStream(resolveLogFormat(setting, nodeEnv)));
}
