import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { emptyToUndefined, type EnvSection, toInt } from '../config/env-rules';
import { databaseNameOf, hostsOf } from '../config/mongodb-uri';

const DEV_DATABASE_DURABILITIES = ['commit', 'delayed'] as const;

/** The MongoDB the service uses, or the embedded dev database started when MONGODB_URI is unset. */
export class DatabaseEnv {
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^mongodb(\+srv)?:\/\/\S+$/, {
    message: 'must be a mongodb:// or mongodb+srv:// connection string',
  })
  MONGODB_URI?: string;

  /**
   * How long start-up waits for the database of MONGODB_URI before it stops with one line naming it (the
   * embedded dev database has its own wait).
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  MONGODB_STARTUP_TIMEOUT_MS = 30_000;

  /**
   * Heap limit of the embedded dev database's JVM (without MONGODB_URI): its data is in DATA_DIR, the heap
   * holds caches and one query's working set. Raise it when a query over a large collection runs out.
   */
  @Matches(/^[1-9]\d{0,5}[mMgG]$/, { message: 'must be a JVM heap size such as 512m or 1g' })
  DEV_DATABASE_MAX_HEAP = '512m';

  /**
   * When the embedded dev database answers a write: `commit` once it is on disk (no acknowledged write is
   * lost to a crash), `delayed` at once (faster; a crash loses up to about a second of writes). Logged at
   * start.
   */
  @IsIn(DEV_DATABASE_DURABILITIES)
  DEV_DATABASE_DURABILITY: (typeof DEV_DATABASE_DURABILITIES)[number] = 'commit';
}

/**
 * Production runs on a MongoDB the operator names, never on the embedded stand-in (it is a development tool,
 * started only when MONGODB_URI is unset). A URI must name its database, in development too: without one the
 * driver writes to `test` without a word (docs/decisions/operations-mongodb-uri-database-name.md). Tests
 * choose their databases themselves. The message shows the hosts, never the credentials.
 */
function databaseProblems(nodeEnv: string, uri: string | undefined): string[] {
  if (!uri && nodeEnv === 'production') {
    return [
      '  MONGODB_URI: is required when NODE_ENV=production (the embedded dev database runs only outside ' +
        'production), e.g. mongodb://db.internal:27017/admin-service',
    ];
  }
  // A malformed URI is already reported by its format rule.
  if (!uri || nodeEnv === 'test' || !/^mongodb(\+srv)?:\/\//.test(uri) || databaseNameOf(uri) !== '') {
    return [];
  }
  return [
    `  MONGODB_URI: names no database (${hostsOf(uri)}), so the driver would write to "test"; add one after ` +
      'the hosts, e.g. mongodb://db.internal:27017/admin-service',
  ];
}

export const databaseEnv: EnvSection<DatabaseEnv> = {
  schema: DatabaseEnv,
  checks: (env) => databaseProblems(env.NODE_ENV, env.MONGODB_URI),
};
