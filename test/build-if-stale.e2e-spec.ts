import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '..', 'tools', 'build-if-stale.js');

/**
 * `npm start`'s prestart step in a project of its own with a fake `nest` CLI that counts its builds (it
 * writes dist/main.js and appends to dist/builds.log).
 */
describe('npm start builds only when the sources changed', () => {
  let root: string;
  const builds = () => readFileSync(join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean).length;
  const prestart = () => execFileSync(process.execPath, [SCRIPT, root], { stdio: 'pipe' });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'main.ts'), 'console.log(1);\n');
    for (const file of ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json']) {
      writeFileSync(join(root, file), '{}\n');
    }
    const cli = join(root, 'node_modules', '@nestjs', 'cli', 'bin');
    mkdirSync(cli, { recursive: true });
    writeFileSync(
      join(cli, 'nest.js'),
      `const fs = require('fs'); const path = require('path');
       const root = path.join(__dirname, '..', '..', '..', '..');
       fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
       fs.mkdirSync(path.join(root, 'dist'));
       fs.writeFileSync(path.join(root, 'dist', 'main.js'), '');
       fs.appendFileSync(path.join(root, 'builds.log'), 'build\\n');`,
    );
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds the first time, not again while nothing changed, again after a source or lock file change', () => {
    prestart();
    expect(builds()).toBe(1);
    prestart();
    prestart();
    expect(builds()).toBe(1);
    writeFileSync(join(root, 'src', 'main.ts'), 'console.log(2);\n');
    prestart();
    expect(builds()).toBe(2);
    writeFileSync(join(root, 'package-lock.json'), '{"changed":true}\n');
    prestart();
    expect(builds()).toBe(3);
  });

  it('builds again when the output is gone', () => {
    prestart();
    rmSync(join(root, 'dist', 'main.js'));
    prestart();
    expect(builds()).toBe(2);
  });

  it('fails like the build when the build fails', () => {
    writeFileSync(join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'process.exit(2);');
    const run = spawnSync(process.execPath, [SCRIPT, root], { stdio: 'pipe' });
    expect(run.status).not.toBe(0);
  });
});
