import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import { StartupError } from '../startup/startup-error';
import { isBootChatter } from './service-logger';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's logger while the application is being assembled, before nestjs-pino's logger exists: the same pino
 * options and stream, so the lines of a start-up that hangs or fails (a database that does not answer, a
 * module that throws) appear at once and in the same format, instead of being held in Nest's buffer.
 */
export class BootLogger implements LoggerService {
  constructor(readonly pino: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    this.write(typeof context === 'string' && isBootChatter(context) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest passes `(message, context)` or, for errors, `(message, stack, context)`. */
  private write(level: Level, message: unknown, params: unknown[]): void {
    const context = typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
    // Nest's copy of a start-up error that main.ts / worker.ts report in one line themselves.
    if (context === 'ExceptionHandler' && message instanceof StartupError) return;
    if (message instanceof Error) this.pino[level]({ context, err: message }, message.message);
    else this.pino[level]({ context }, String(message));
  }
}

export function createBootLogger(options: pino.LoggerOptions, stream: pino.DestinationStream): BootLogger {
  return new BootLogger(pino(options, stream));
}
