import pinoPretty from 'pino-pretty';
import type { DestinationStream } from 'pino';
import type { AppConfig } from '../../config/env';

export type LogFormat = 'json' | 'pretty';

/**
 * `auto` is readable lines for a person at a terminal, JSON for a log collector (and always in production).
 */
export function resolveLogFormat(
  setting: AppConfig['LOG_FORMAT'],
  nodeEnv: AppConfig['NODE_ENV'],
  terminal = process.stdout.isTTY === true,
): LogFormat {
  if (setting !== 'auto') return setting;
  return terminal && nodeEnv !== 'production' ? 'pretty' : 'json';
}

interface PrettyLine {
  msg?: string;
  context?: string;
  method?: string;
  route?: string;
  status?: number;
  ms?: number;
  reason?: string;
}

/**
 * One readable line per entry (`12:00:01.123 INFO GET /health 200 3 ms`, a 4xx followed by its reason:
 * `POST /auth/login 400 2 ms email must be an email`); colours only on a terminal.
 * A synchronous stream, not a worker-thread transport: lines keep their order with the process's other
 * output, and nothing is lost when the process exits.
 */
export function prettyStream(colorize = process.stdout.isTTY === true): DestinationStream {
  return pinoPretty({
    colorize,
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context,method,route,status,ms,reason',
    messageFormat: (log: PrettyLine, messageKey: string) => {
      if (log.route !== undefined) {
        const access = `${log.method} ${log.route} ${log.status} ${log.ms} ms`;
        return log.reason === undefined ? access : `${access} ${log.reason}`;
      }
      const value = (log as Record<string, unknown>)[messageKey];
      const message = typeof value === 'string' ? value : JSON.stringify(value ?? '');
      return log.context ? `[${log.context}] ${message}` : message;
    },
  });
}
