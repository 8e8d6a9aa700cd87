import { type DynamicModule, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MongooseModule } from '@nestjs/mongoose';
import mongoose, { type ConnectOptions } from 'mongoose';
import { chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { requestTimeLimit } from '../common/database/request-time-limit';
import { StartupError } from '../common/startup/startup-error';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from '../common/storage/private-directory';
import type { AppConfig } from '../config/env';
import {
  DevDatabaseFileLockedError,
  type DevDatabaseDurability,
  startDevDatabase,
  withDatabaseName,
} from './dev-database';
import { observedConnection } from './connection-observers';
import { DatabaseAvailability } from './database-availability';

// Operators inside user-supplied filter values ({"email":{"$gt":""}}) are neutralised by Mongoose; service
// code that builds its own operator queries wraps them in `mongoose.trusted()`.
mongoose.set('sanitizeFilter', true);
// Unknown query fields are an error in our code, never something to silently drop.
mongoose.set('strictQuery', 'throw');
// Queries sent while answering a request carry `maxTimeMS` (applied to every model compiled after this).
mongoose.plugin(requestTimeLimit);

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
 * How long an operation waits for a writable server before it fails, in every process: a request whose
 * database is away answers 503 within about this long instead of hanging
 * (docs/decisions/operations-database-away-fail-fast.md).
 */
export const SERVER_SELECTION_MS = 1_500;

/** The driver's check interval (its minimum is 500 ms). */
const HEARTBEAT_MS = 500;

/**
 * Driver settings shared by every process. The driver checks the server every HEARTBEAT_MS, so a lost or
 * returning database is known within about that long (DatabaseAvailability); an operation fails after
 * SERVER_SELECTION_MS without a writable server, so requests fail fast and workers retry (their writes are
 * retried, never dropped). docs/decisions/data-production-database-and-indexes.md,
 * docs/decisions/operations-database-away-fail-fast.md.
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
    heartbeatFrequencyMS: HEARTBEAT_MS,
    serverSelectionTimeoutMS: SERVER_SELECTION_MS,
    // Also the limit of a monitoring check: a server silent this long (a half-open connection) is marked
    // down and the operations waiting on its connections are interrupted.
    connectTimeoutMS: 10_000,
    // Operations go straight to the driver, whose server selection is bounded above; Mongoose's own queue
    // would hold them while it thinks the connection stale (two missed heartbeats, e.g. under load).
    bufferCommands: false,
    // A socket silent this long is dead (a half-open connection after a failover); longer than the slowest
    // single round trip we send. Development keeps the driver's default (no limit).
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
async function embeddedDatabaseUri(
  dataDir: string,
  maxHeap: string,
  durability: DevDatabaseDurability,
): Promise<string> {
  ensurePrivateDirectory(dataDir);
  const file = join(dataDir, 'mongo.mv');
  const logger = new Logger('DevDatabase');
  const database = await startDevDatabase({
    file,
    maxHeap,
    durability,
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
              config.get('DEV_DATABASE_DURABILITY', { infer: true }),
            );
            const production = config.get('NODE_ENV', { infer: true }) === 'production';
            return {
              uri,
              ...connectionOptions(production, options.autoIndex ?? true, options.longCommands),
              ...observedConnection(),
            };
          },
        }),
      ],
      providers: [DatabaseAvailability],
      exports: [DatabaseAvailability],
      global: true,
    };
  }
}
