import type { Config } from '@jest/types';
import { join } from 'node:path';
import { startDevDatabase } from '../../src/database/dev-database';
import {
  QUERY_SHAPES_DIR_VARIABLE,
  RECORDINGS_ROOT,
  startRun,
} from '../../src/database/query-shapes/query-shape-records';

/**
 * One in-memory dev database for the whole run; test files use databases of their own on it. Every query
 * the application sends is recorded into this run's directory for the index-coverage gate
 * (test/setup/index-coverage-reporter.js); worker processes started by tests inherit the variable.
 */
export default async function globalSetup(config: Config.GlobalConfig): Promise<void> {
  process.env[QUERY_SHAPES_DIR_VARIABLE] = startRun(join(config.rootDir, RECORDINGS_ROOT));
  const database = await startDevDatabase();
  process.env.TEST_MONGODB_BASE_URI = database.uri;
  (globalThis as { __DEV_DATABASE__?: unknown }).__DEV_DATABASE__ = database;
}
