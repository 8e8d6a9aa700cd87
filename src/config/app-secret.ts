import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from './env';

const SECRET_FILE = 'app-secret';

/**
 * The master secret. Production must set APP_SECRET; elsewhere one is generated once into DATA_DIR, so a
 * local restart keeps tokens and encrypted API keys valid.
 */
export function resolveAppSecret(env: Pick<Env, 'APP_SECRET' | 'NODE_ENV' | 'DATA_DIR'>): string {
  if (env.APP_SECRET) return env.APP_SECRET;
  if (env.NODE_ENV === 'production') {
    throw new Error('Invalid configuration:\n  APP_SECRET: is required when NODE_ENV=production');
  }
  const file = join(env.DATA_DIR, SECRET_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(env.DATA_DIR, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}
