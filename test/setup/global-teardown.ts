import type { DevDatabase } from '../../src/database/dev-database';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __DEV_DATABASE__?: DevDatabase }).__DEV_DATABASE__?.stop();
}
