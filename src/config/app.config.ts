import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';
import { dataDirProblem } from './data-dir';
import { emptyToUndefined, type EnvSection, NODE_ENVS, type NodeEnv, toInt } from './env-rules';

/** The process as a whole: where it listens, where it keeps files, its master secret. */
export class AppEnv {
  @IsIn(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsString()
  @MinLength(1)
  DATA_DIR = '.data';

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'must be at least 32 characters' })
  APP_SECRET?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  PUBLIC_BASE_URL?: string;

  /**
   * How long a worker (e-mail queue, chat delivery) may take to stop on SIGTERM: work in flight finishes
   * within it, or its jobs are released (docs/operations/email-delivery.md).
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  WORKER_SHUTDOWN_MS = 30_000;

  get publicBaseUrl(): string {
    return (this.PUBLIC_BASE_URL ?? `http://localhost:${this.PORT}`).replace(/\/+$/, '');
  }
}

export const appEnv: EnvSection<AppEnv> = {
  schema: AppEnv,
  checks(env, invalid) {
    const problems: string[] = [];
    const dataDir = invalid.has('DATA_DIR') ? undefined : dataDirProblem(env.DATA_DIR);
    if (dataDir) problems.push(`  DATA_DIR: ${dataDir}`);
    // Elsewhere a secret is generated into DATA_DIR (app-secret.ts) once the environment is valid.
    if (env.NODE_ENV === 'production' && !env.APP_SECRET && !invalid.has('APP_SECRET')) {
      problems.push('  APP_SECRET: is required when NODE_ENV=production');
    }
    return problems;
  },
};
