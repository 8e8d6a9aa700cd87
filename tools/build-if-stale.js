#!/usr/bin/env node
/**
 * `npm start` and `npm run start:worker` build first, but only when the build is not current: a hash of
 * everything the build reads (src/, the tsconfig files, nest-cli.json, package-lock.json) is kept beside the
 * output, and `nest build` runs only when it differs or the output is missing. Plain JavaScript, so it
 * runs before anything is compiled.
 */
const { createHash } = require('node:crypto');
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

// The project root; a test passes another one.
const root = process.argv[2] ?? join(__dirname, '..');
const stampFile = join(root, 'dist', '.build-hash');
const inputs = ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'];

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

function sourceHash() {
  const hash = createHash('sha256');
  const files = [...filesUnder(join(root, 'src')), ...inputs.map((name) => join(root, name))].sort();
  for (const file of files) {
    hash.update(relative(root, file)).update('\0');
    if (existsSync(file)) hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

const current = sourceHash();
const built =
  existsSync(join(root, 'dist', 'main.js')) && existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : '';
if (built === current) process.exit(0);

console.error('Building (the sources changed since the last build)…');
const nest = join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js');
execFileSync(process.execPath, [nest, 'build'], { cwd: root, stdio: 'inherit' });
writeFileSync(stampFile, current);
