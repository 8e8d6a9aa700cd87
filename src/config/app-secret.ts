import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from '../common/storage/private-directory';

/** What deciding the master secret needs from the environment. */
export interface AppSecretSource {
  APP_SECRET?: string;
  NODE_ENV: string;
  DATA_DIR: string;
}

const SECRET_FILE = 'app-secret';

/**
 * The master secret. Production must set APP_SECRET; elsewhere one is generated once into DATA_DIR, so a
 * local restart keeps tokens and encrypted API keys valid. Null means "required but missing".
 */
export function resolveAppSecret(source: AppSecretSource): string | null {
  if (source.APP_SECRET) return source.APP_SECRET;
  if (source.NODE_ENV === 'production') return null;
  const file = join(source.DATA_DIR, SECRET_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  ensurePrivateDirectory(source.DATA_DIR);
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: PRIVATE_FILE_MODE });
  chmodSync(file, PRIVATE_FILE_MODE);
  return secret;
}
