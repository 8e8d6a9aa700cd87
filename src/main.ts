import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { join } from 'node:path';
import { AppModule } from './app.module';
import { configureApp, createFastifyAdapter } from './app.setup';
import { loadEnv } from './config/env';
import { startDevDatabase, withDatabaseName } from './database/dev-database';
import { indexesReady } from './database/indexes-ready';

async function bootstrap(): Promise<void> {
  const env = loadEnv();

  // Without MONGODB_URI, run the embedded dev database with its data in an H2 file under DATA_DIR.
  if (!env.MONGODB_URI) {
    const devDatabase = await startDevDatabase({ file: join(env.DATA_DIR, 'mongo.mv') });
    env.MONGODB_URI = withDatabaseName(devDatabase.uri, 'admin-service');
    console.log(
      JSON.stringify({ level: 'info', msg: `Embedded dev database started at ${devDatabase.uri}` }),
    );
  }

  const app = await NestFactory.create<NestFastifyApplication>(AppModule, createFastifyAdapter(env), {
    bufferLogs: true,
  });
  await configureApp(app);
  await indexesReady(app);
  // On SIGTERM/SIGINT Nest stops accepting, finishes in-flight requests and closes the database connection.
  // The dev database needs no hook: it exits (closing its H2 file) when this process's pipe to it closes.
  await app.listen(env.PORT, env.HOST);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
