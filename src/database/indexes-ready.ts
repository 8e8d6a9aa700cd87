import { type INestApplicationContext, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { AppConfig } from '../config/env';
import { planIndexes } from './index-plan';

/**
 * Waits until every model has created its collection and declared indexes. Serving before then would let
 * a duplicate slip past a unique index still being built, and the dev database fails inserts that race
 * with the index builds of a fresh database ("Unknown error: null").
 * Production builds no index at start-up (`npm run db:indexes` does, ahead of the deploy), so there is
 * nothing to wait for: start-up never waits on an index build.
 */
export async function indexesReady(app: INestApplicationContext): Promise<void> {
  const config = app.get<ConfigService<AppConfig, true>>(ConfigService);
  if (config.get('NODE_ENV', { infer: true }) === 'production') {
    warnOfIndexDrift(app.get<Connection>(getConnectionToken()));
    return;
  }
  const connection = app.get<Connection>(getConnectionToken());
  await Promise.all(Object.values(connection.models).map((model) => model.init()));
}

/**
 * One line for the operator when the database's indexes differ from the declared ones (say, `npm run
 * db:indexes` was never run, so no unique rule is enforced), or null when they match. Read-only: one
 * `listIndexes` per collection.
 */
export async function indexDrift(connection: Connection): Promise<string | null> {
  const plans = await planIndexes(connection);
  const missing = plans.reduce((sum, plan) => sum + plan.missing.length, 0);
  const conflicts = plans.reduce((sum, plan) => sum + plan.conflicts.length, 0);
  if (missing === 0 && conflicts === 0) return null;
  const unique = plans.reduce((sum, plan) => sum + plan.missing.filter((i) => i.options.unique).length, 0);
  return (
    `The database lacks ${missing} declared index(es) (${unique} unique: those rules are not enforced)` +
    (conflicts ? ` and has ${conflicts} conflicting one(s)` : '') +
    ': run npm run db:indexes'
  );
}

/**
 * Production does not wait for the check: start-up never depends on the indexes, it only says what is wrong.
 */
function warnOfIndexDrift(connection: Connection): void {
  const logger = new Logger('Database');
  indexDrift(connection).then(
    (drift) => drift && logger.warn(drift),
    (error: unknown) => logger.warn(`Index check skipped: ${(error as Error).message}`),
  );
}
