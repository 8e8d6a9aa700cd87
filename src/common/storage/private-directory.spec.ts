import { chmodSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePrivateDirectory } from './private-directory';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('ensurePrivateDirectory', () => {
  const root = mkdtempSync(join(tmpdir(), 'private-dir-'));

  it('creates missing directories owner-only', () => {
    const dir = join(root, 'a', 'b');
    ensurePrivateDirectory(dir);
    expect(modeOf(join(root, 'a'))).toBe(0o700);
    expect(modeOf(dir)).toBe(0o700);
  });

  it('takes group and other rights away from an existing directory', () => {
    const dir = join(root, 'open');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    ensurePrivateDirectory(dir);
    expect(modeOf(dir)).toBe(0o700);
  });
});
