import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { configureApp, createFastifyAdapter } from './app.setup';
import { bootLogger } from './common/logging/log-stream';
import { limitHeapGrowth } from './common/memory/heap-growth';
import { ServiceLogger } from './common/logging/service-logger';
import { listenProblem, requireFreePort } from './common/startup/port-available';
import type { AppConfig } from './config/env';
import { indexesReady } from './database/indexes-ready';
import { requireReachableDatabase } from './database/database-reachable';

/** The address to open in a browser: a wildcard listener is reached on localhost. */
function listeningUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/**
 * An operator's database must answer before Nest builds the application, so a wrong or unreachable
 * MONGODB_URI ends start-up with one line (ConfigModule has put the validated values into process.env).
 * Without MONGODB_URI the embedded dev database starts instead (validateEnv allows that only outside
 * production).
 */
async function databaseAnswers(): Promise<void> {
  const uri = process.env.MONGODB_URI;
  if (uri) await requireReachableDatabase(uri, Number(process.env.MONGODB_STARTUP_TIMEOUT_MS));
}

async function bootstrap(): Promise<void> {
  limitHeapGrowth();
  // Loads `.env` and validates the environment: a bad value stops here with a message naming the variable.
  const root = await AppModule.forRoot();
  // ConfigModule has put the validated PORT and HOST (defaults included) into process.env.
  await requireFreePort(Number(process.env.PORT), process.env.HOST!);
  await databaseAnswers();
  // Fastify takes its proxy trust when it is created, before Nest's container exists; ConfigModule has put
  // the validated value (also one from `.env`) into process.env by now.
  const app = await NestFactory.create<NestFastifyApplication>(
    root,
    createFastifyAdapter(process.env.TRUST_PROXY),
    // Start-up lines are written as they happen (a database that does not answer shows at once); a failure
    // reaches the catch below instead of aborting the process.
    { logger: bootLogger(), abortOnError: false },
  );
  await configureApp(app);
  await indexesReady(app);
  // On SIGTERM/SIGINT Nest stops accepting, finishes in-flight requests and closes the database connection.
  const config = app.get<ConfigService<AppConfig, true>>(ConfigService);
  const port = config.get('PORT', { infer: true });
  const host = config.get('HOST', { infer: true });
  await app.listen(port, host).catch((error: unknown) => {
    throw listenProblem(error, port, host) ?? error;
  });
  const url = listeningUrl(host, port);
  app.get(ServiceLogger).log(`Listening on ${url}; API docs at ${url}/docs`, 'Main');
}

bootstrap().catch((error: unknown) => {
  bootLogger().fatal(error instanceof Error ? error.message : String(error), 'Main');
  // Whatever the failed start left open (a database connection, the embedded database) must not keep it
  // alive.
  process.exit(1);
});
