import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LEASE_FIELDS } from './lease-fields';

const SRC = join(__dirname, '..');
const QUEUE = __dirname;

/** Every shipped source file under `dir` (tests may read lease fields; the code they test may not). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === QUEUE ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('lease fields', () => {
  it('are named only in src/queue/ (the engine owns them; a kind calls its store)', () => {
    const pattern = new RegExp(`\\b(${LEASE_FIELDS.join('|')})\\b`);
    const offenders = sources(SRC).flatMap((path) =>
      readFileSync(path, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          pattern.test(line) ? [`${relative(SRC, path)}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(offenders).toEqual([]);
  });
});
