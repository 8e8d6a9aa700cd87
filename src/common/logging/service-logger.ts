import { Injectable } from '@nestjs/common';
import { Logger } from 'nestjs-pino';

/** Nest's start-up chatter: a line per module and per route (about 180 lines), useful only when debugging. */
const BOOT_CHATTER = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

export const isBootChatter = (context: string) => BOOT_CHATTER.has(context);

/**
 * nestjs-pino's Nest logger, with Nest's per-module and per-route start-up lines at debug level, so the
 * start-up an operator reads is a handful of lines ending with the listening URL.
 */
@Injectable()
export class ServiceLogger extends Logger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams.at(-1);
    if (typeof context === 'string' && isBootChatter(context)) {
      super.debug(message, ...optionalParams);
      return;
    }
    super.log(message, ...optionalParams);
  }
}
