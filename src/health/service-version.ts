import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The `version` of the service's package.json, read once. Found by walking up from this file, so it works
 * from `src/` (tests, ts-node) and from `dist/` (the build) alike.
 */
export function readServiceVersion(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const { version } = JSON.parse(readFileSync(candidate, 'utf8')) as { version?: unknown };
      return typeof version === 'string' ? version : 'unknown';
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
