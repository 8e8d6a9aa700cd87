#!/usr/bin/env node
/**
 * `npm run bench -- <name> [args…]` runs bench/<name>.bench.ts; `npm run bench` lists the benches. A bench
 * is found by its file name, so a new one needs no script and no tsconfig of its own: it is compiled with
 * bench/tsconfig.json into .bench-build/<name>/ (a directory per bench, so two can run at once), after the
 * service's own build is brought up to date (tools/build-if-stale.js: the HTTP benches start dist/main.js).
 * Plain JavaScript, so it runs before anything is compiled.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const SUFFIX = '.bench.ts';
const MAX_SUMMARY = 90;

function benchNames() {
  return readdirSync(__dirname)
    .filter((file) => file.endsWith(SUFFIX))
    .map((file) => file.slice(0, -SUFFIX.length))
    .sort();
}

/** What a bench measures: the first line of its header comment, without the "… benchmark:" title. */
function summaryOf(name) {
  const source = readFileSync(join(__dirname, `${name}${SUFFIX}`), 'utf8');
  const firstLine = /\/\*\*\s*\n\s*\*\s*([^\n]*)/.exec(source)?.[1] ?? '';
  const summary = firstLine.replace(/^[^:]*benchmark[^:]*:\s*/i, '').replace(/,$/, '') || firstLine;
  return summary.length > MAX_SUMMARY ? `${summary.slice(0, MAX_SUMMARY - 1)}…` : summary;
}

function list() {
  const names = benchNames();
  const width = Math.max(...names.map((name) => name.length));
  console.log('npm run bench -- <name>   (environment variables for each are in its header comment)\n');
  for (const name of names) console.log(`  ${name.padEnd(width)}  ${summaryOf(name)}`);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function main() {
  const [name, ...args] = process.argv.slice(2);
  if (!name) return list();
  if (!benchNames().includes(name)) {
    console.error(`No bench named "${name}" (no bench/${name}${SUFFIX}).\n`);
    list();
    process.exit(1);
  }
  run(process.execPath, [join(ROOT, 'tools', 'build-if-stale.js')]);
  const outDir = join(ROOT, '.bench-build', name);
  mkdirSync(outDir, { recursive: true });
  const tsconfig = join(outDir, 'tsconfig.json');
  const fromOut = (path) => relative(outDir, path);
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: fromOut(join(__dirname, 'tsconfig.json')),
      compilerOptions: { outDir: '.' },
      include: [],
      files: [fromOut(join(__dirname, `${name}${SUFFIX}`))],
    }),
  );
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', tsconfig]);
  const compiled = join(outDir, 'bench', `${name}.bench.js`);
  if (!existsSync(compiled)) throw new Error(`tsc wrote no ${relative(ROOT, compiled)}`);
  run(process.execPath, [compiled, ...args]);
}

main();
