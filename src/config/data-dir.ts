import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** The directory itself when it exists, else its nearest existing ancestor: where creating it would start. */
function nearestExisting(path: string): string {
  for (let candidate = path; ; candidate = dirname(candidate)) {
    try {
      statSync(candidate);
      return candidate;
    } catch {
      if (dirname(candidate) === candidate) return candidate;
    }
  }
}

/**
 * Why this process could not create or write DATA_DIR (the database file, the generated secret, uploads and
 * e-mails live there), or undefined when it can. Checked without creating anything, so validating the
 * environment has no side effect: the nearest existing part of the path must be a directory this user may
 * write into.
 */
export function dataDirProblem(dataDir: string): string | undefined {
  const path = resolve(dataDir);
  const existing = nearestExisting(path);
  const cause = (() => {
    if (!statSync(existing).isDirectory()) return `${existing} is a file, not a directory (ENOTDIR)`;
    try {
      accessSync(existing, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return code === 'EROFS'
        ? `${existing} is on a read-only file system (EROFS)`
        : `this user may not write into ${existing} (${code})`;
    }
  })();
  if (!cause) return undefined;
  return `cannot create or write ${path}: ${cause}; set DATA_DIR to a directory this user can write`;
}
