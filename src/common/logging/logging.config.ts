import { IsIn } from 'class-validator';
import type { EnvSection } from '../../config/env-rules';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

export class LoggingEnv {
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** `auto`: readable lines in a terminal outside production, JSON otherwise (log-format.ts). */
  @IsIn(LOG_FORMATS)
  LOG_FORMAT: (typeof LOG_FORMATS)[number] = 'auto';
}

export const loggingEnv: EnvSection<LoggingEnv> = { schema: LoggingEnv };
