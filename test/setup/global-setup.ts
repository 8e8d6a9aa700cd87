import { startDevDatabase } from '../../src/database/dev-database';

/** One in-memory dev database for the whole run; test files use databases of their own on it. */
export default async function globalSetup(): Promise<void> {
  const database = await startDevDatabase();
  process.env.TEST_MONGODB_BASE_URI = database.uri;
  (globalThis as { __DEV_DATABASE__?: unknown }).__DEV_DATABASE__ = database;
}
