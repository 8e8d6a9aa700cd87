import type { INestApplicationContext } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';

/**
 * Waits until every model has created its collection and declared indexes. Serving before then would let
 * a duplicate slip past a unique index still being built, and the dev database fails inserts that race
 * with the index builds of a fresh database ("Unknown error: null").
 */
export async function indexesReady(app: INestApplicationContext): Promise<void> {
  const connection = app.get<Connection>(getConnectionToken());
  await Promise.all(Object.values(connection.models).map((model) => model.init()));
}
