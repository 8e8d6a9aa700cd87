import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MongooseModule } from '@nestjs/mongoose';
import mongoose, { type ConnectOptions } from 'mongoose';
import { chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StartupError } from '../common/startup/startup-error';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from '../common/storage/private-directory';
import type { AppConfig } from '../config/env';
import { DevDatabaseFileLockedError, startDevDatabase, withDatabaseName } from './dev-database';
import { queryShapeRecording } from './query-shapes/query-shape-recorder';
import { CommandCountReport, countingCommands } from './command-count-report';

// Operators inside user-supplied filter values ({"email":{"$gt":""}}) are neutralised by Mongoose; service
// code that builds its own operator queries wraps them in `mongoose.trusted()`.
mongoose.set('sanitizeFilter', true);
// Unknown query fields are an error in our code, never something to silently drop.
mongoose.set('strictQuery', 'throw');

export interface DatabaseOptions {
  /**
   * Without MONGODB_URI, start the embedded dev database (H2 file in DATA_DIR) and stop it with this process.
   * The API server does; a worker-only process does not: it must share the API's database.
   */
  embedded: boolean;
  /**
   * Build declared indexes (and create collections) when models are registered. Off for the `db:indexes`
   * command, which compares and builds them itself; always off in production (see connectionOptions).
   */
  autoIndex?: boolean;
  /**
   * No socket timeout: for `db:indexes`, whose `createIndexes` waits for every voting member and may take
   * hours on a large collection (docs/operations/running-on-mongodb.md "Index builds").
   */
  longCommands?: boolean;
}

/**
 * Driver settings shared by every process. Production outlasts a replica-set election (up to about 12 s)
 * instead of failing the requests and worker writes caught in it; development fails fast, since its only
 * database is local and a missing one will not come back by waiting. docs/decisions.md, issue 26.
 */
export function connectionOptions(
  production: boolean,
  autoIndex: boolean,
  longCommands = false,
): ConnectOptions {
  return {
    // Reads right after writes (claims, duplicate read-backs) must see them: never a lagging secondary.
    readPreference: 'primary',
    retryWrites: true,
    retryReads: true,
    serverSelectionTimeoutMS: production ? 30_000 : 5_000,
    // A socket silent this long is dead (a half-open connection after a failover); longer than an election
    // plus the slowest single round trip we send. Development keeps the driver's default (no limit).
    ...(production ? { socketTimeoutMS: longCommands ? 0 : 60_000 } : {}),
    // Production builds indexes with `npm run db:indexes`: start-up sends no index build or collection
    // creation, which on a replica set can wait on a secondary that is down.
    autoIndex: autoIndex && !production,
    autoCreate: autoIndex && !production,
  };
}

/**
 * The embedded dev database, started on first use. Its process reads our stdin pipe and exits when that
 * closes, so it needs no shutdown hook: it stops (closing its H2 file cleanly) whenever this process ends.
 */
async function embeddedDatabaseUri(dataDir: string, maxHeap: string): Promise<string> {
  ensurePrivateDirectory(dataDir);
  const file = join(dataDir, 'mongo.mv');
  const logger = new Logger('DevDatabase');
  const database = await startDevDatabase({
    file,
    maxHeap,
    log: (level, line) => (level === 'info' ? logger.log(line) : logger[level](line)),
  }).catch((error: unknown) => {
    if (!(error instanceof DevDatabaseFileLockedError)) throw error;
    throw new StartupError(
      `Another instance is using DATA_DIR=${resolve(dataDir)} (its dev database file is locked): stop that ` +
        'instance, or give this one another DATA_DIR and PORT',
    );
  });
  // H2 creates the file with the JVM's umask; the data is the service's, nobody else's.
  chmodSync(file, PRIVATE_FILE_MODE);
  logger.log(`Embedded dev database started at ${database.uri}`);
  return withDatabaseName(database.uri, 'admin-service');
}

@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        MongooseModule.forRootAsync({
          inject: [ConfigService],
          useFactory: async (config: ConfigService<AppConfig, true>) => {
            // An empty MONGODB_URI (`MONGODB_URI=` in a shell or `.env`) means unset, as validation reads it;
            // ConfigService hands back the raw '' of process.env.
            let uri = config.get('MONGODB_URI', { infer: true }) || undefined;
            if (!uri && !options.embedded) {
              throw new Error('MONGODB_URI is not set: a separate worker process needs the shared database');
            }
            uri ??= await embeddedDatabaseUri(
              config.get('DATA_DIR', { infer: true }),
              config.get('DEV_DATABASE_MAX_HEAP', { infer: true }),
            );
            const production = config.get('NODE_ENV', { infer: true }) === 'production';
            return {
              uri,
              ...connectionOptions(production, options.autoIndex ?? true, options.longCommands),
              ...queryShapeRecording(),
              // A benchmark counts the commands per request (CommandCountReport).
              ...(countingCommands() ? { monitorCommands: true } : {}),
            };
          },
        }),
      ],
      providers: [CommandCountReport],
    };
  }
}
