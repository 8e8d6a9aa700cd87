import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { compileWorker } from './helpers/worker-process';

const run = promisify(execFile);

/**
 * A workload shaped like a campaign going out: 30 MB stays live, and every object made lives through
 * several young-generation collections (like claimed jobs and buffered events) before it is dropped, so
 * it is promoted and then becomes garbage in the old generation. Prints the largest heap it saw.
 */
const WORKLOAD = `
  if (process.argv[1] === 'limit') require(process.argv[2]).limitHeapGrowth();
  const live = Array.from({ length: 30 }, () => new Array(131072).fill(0.5));
  const held = [];
  let max = 0;
  for (let i = 0; i < 6000; i += 1) {
    held.push(Array.from({ length: 500 }, (_, j) => ({ i, j, text: 'message ' + i + ':' + j })));
    if (held.length > 600) held.shift();
    if (i % 10 === 0) max = Math.max(max, process.memoryUsage().heapUsed);
  }
  // live.length: the 30 MB is used after the loop, so it stays live through it.
  console.log(JSON.stringify({ max, live: live.length }));
`;

async function largestHeap(compiledDir: string, limit: boolean): Promise<number> {
  const module = join(compiledDir, 'common', 'memory', 'heap-growth.js');
  const { stdout } = await run(process.execPath, ['-e', WORKLOAD, limit ? 'limit' : 'default', module]);
  return (JSON.parse(stdout) as { max: number }).max;
}

describe('limitHeapGrowth (main.ts and worker.ts call it at start-up)', () => {
  it('keeps promoted garbage from piling up: the largest heap is well below that of the default', async () => {
    // The compiled sources' root: where worker.js is.
    const root = dirname((await compileWorker()).workerJs);
    const [limited, unlimited] = [await largestHeap(root, true), await largestHeap(root, false)];
    expect(limited).toBeLessThan(unlimited * 0.8);
  }, 120_000);
});
