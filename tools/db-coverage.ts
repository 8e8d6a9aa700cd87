import { resolve } from 'node:path';
import { judgeRun } from '../test/query-shapes/coverage-gate';
import { latestRun, RECORDINGS_ROOT } from '../test/query-shapes/query-shape-records';

const USAGE = 'Usage: npm run db:coverage -- [<recordings directory>]';

/**
 * `npm run db:coverage`: the index-coverage report of the latest test run (or of the recordings directory
 * given): how many query shapes it recorded, how many an index serves, the allow-listed ones with their
 * reasons, the uncovered ones and the declared indexes no shape used. Exits 1 when a shape is uncovered.
 * docs/operations/index-coverage.md.
 */
function main(): number {
  const args = process.argv.slice(2);
  if (args.length > 1 || args.some((arg) => arg.startsWith('-'))) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const dir = args[0] ? resolve(args[0]) : latestRun(resolve(RECORDINGS_ROOT));
  if (!dir) {
    process.stderr.write(`No recordings under ${RECORDINGS_ROOT}: run the tests first (npm test).\n`);
    return 2;
  }
  const result = judgeRun(dir);
  process.stdout.write(`Recordings: ${dir} (${result.files} files)\n${result.lines.join('\n')}\n`);
  return result.uncovered ? 1 : 0;
}

process.exitCode = main();
