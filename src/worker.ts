import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { bootLogger } from './common/logging/log-stream';
import { limitHeapGrowth } from './common/memory/heap-growth';
import { ServiceLogger } from './common/logging/service-logger';
import { indexesReady } from './database/indexes-ready';
import { requireReachableDatabase } from './database/database-reachable';

/**
 * A worker-only process: the e-mail worker and the chat delivery (with the daily digest) without the HTTP
 * server, for sending capacity that scales apart from the API (`npm run start:worker`). It needs
 * `MONGODB_URI`: the embedded dev database belongs to the process that started it.
 */
async function bootstrap(): Promise<void> {
  limitHeapGrowth();
  // Running the workers is this process's whole purpose, whatever the switches say for API servers.
  process.env.EMAIL_WORKER_ENABLED = 'true';
  process.env.CHAT_WORKER_ENABLED = 'true';
  const root = await AppModule.forRoot({ embedded: false });
  // Checked before Nest starts, for a one-line message (ConfigModule has merged `.env` into process.env).
  if (!process.env.MONGODB_URI) {
    throw new Error('MONGODB_URI is not set: a separate worker process needs the shared database');
  }
  await requireReachableDatabase(process.env.MONGODB_URI, Number(process.env.MONGODB_STARTUP_TIMEOUT_MS));
  const app = await NestFactory.createApplicationContext(root, {
    logger: bootLogger(),
    abortOnError: false,
  });
  app.useLogger(app.get(ServiceLogger));
  // On SIGTERM/SIGINT the worker stops claiming, finishes the messages in flight, records them and exits 0.
  app.enableShutdownHooks([], { useProcessExit: true });
  await indexesReady(app);
  app.get(ServiceLogger).log('Worker started: e-mail queue and chat delivery', 'Worker');
}

bootstrap().catch((error: unknown) => {
  bootLogger().fatal(error instanceof Error ? error.message : String(error), 'Worker');
  process.exit(1);
});
