import type { Config } from '@jest/types';
import { join } from 'node:path';
import { startDevDatabase } from '../../src/database/dev-database';
import { compileWorker } from '../helpers/worker-process';
import { QUERY_SHAPES_DIR_VARIABLE, RECORDINGS_ROOT, startRun } from '../query-shapes/query-shape-records';

/**
 * One in-memory dev database for the whole run; test files use databases of their own on it. Every query
 * the application sends is recorded into this run's directory for the index-coverage gate
 * (test/setup/index-coverage-reporter.js); processes started by tests inherit the variables.
 */
export default async function globalSetup(config: Config.GlobalConfig): Promise<void> {
  process.env[QUERY_SHAPES_DIR_VARIABLE] = startRun(join(config.rootDir, RECORDINGS_ROOT));
  // The service processes tests start record too, through a preload: the service ships no recorder.
  const preload = JSON.stringify(join(config.rootDir, 'test', 'query-shapes', 'preload.js'));
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim();
  // A whole run compiles the service once here, where no hook timeout applies: on a busy machine tsc takes
  // minutes, longer than a test hook may wait. The files that start real processes then find it built. A
  // run of chosen files (a path pattern) compiles on first use instead, so a unit test never waits for it.
  const [database] = await Promise.all([
    startDevDatabase(),
    config.testPathPattern ? undefined : compileWorker(),
  ]);
  process.env.TEST_MONGODB_BASE_URI = database.uri;
  (globalThis as { __DEV_DATABASE__?: unknown }).__DEV_DATABASE__ = database;
}
