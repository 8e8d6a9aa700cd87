import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { configureApp, createFastifyAdapter } from './app.setup';
import type { AppConfig } from './config/env';
import { indexesReady } from './database/indexes-ready';

async function bootstrap(): Promise<void> {
  // Loads `.env` and validates the environment: a bad value stops here with a message naming the variable.
  const root = await AppModule.forRoot();
  // Fastify takes its proxy trust when it is created, before Nest's container exists; ConfigModule has put
  // the validated value (also one from `.env`) into process.env by now.
  const app = await NestFactory.create<NestFastifyApplication>(
    root,
    createFastifyAdapter(process.env.TRUST_PROXY),
    { bufferLogs: true },
  );
  await configureApp(app);
  await indexesReady(app);
  // On SIGTERM/SIGINT Nest stops accepting, finishes in-flight requests and closes the database connection.
  const config = app.get<ConfigService<AppConfig, true>>(ConfigService);
  await app.listen(config.get('PORT', { infer: true }), config.get('HOST', { infer: true }));
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
