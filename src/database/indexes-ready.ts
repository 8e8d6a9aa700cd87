import type { INestApplicationContext } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { AppConfig } from '../config/env';

/**
 * Waits until every model has created its collection and declared indexes. Serving before then would let
 * a duplicate slip past a unique index still being built, and the dev database fails inserts that race
 * with the index builds of a fresh database ("Unknown error: null").
 * Production builds no index at start-up (`npm run db:indexes` does, ahead of the deploy), so there is
 * nothing to wait for: start-up never waits on an index build.
 */
export async function indexesReady(app: INestApplicationContext): Promise<void> {
  const config = app.get<ConfigService<AppConfig, true>>(ConfigService);
  if (config.get('NODE_ENV', { infer: true }) === 'production') return;
  const connection = app.get<Connection>(getConnectionToken());
  await Promise.all(Object.values(connection.models).map((model) => model.init()));
}
