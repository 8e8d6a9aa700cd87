import { chmodSync, mkdirSync, statSync } from 'node:fs';

/** Owner-only: DATA_DIR holds the database file, the generated secret, uploads and e-mails. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` and any missing parent readable by this user only, and takes group and other rights away
 * from an existing one (an earlier version created DATA_DIR world-readable).
 */
export function ensurePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const { mode } = statSync(dir);
  if ((mode & 0o077) !== 0) chmodSync(dir, mode & PRIVATE_DIRECTORY_MODE);
}
