/**
 * A CPU profile of part of this process's own work (the campaign bench plays the service in-process), taken
 * with the inspector between `start` and `stop`, written as a `.cpuprofile` (open it in Chrome DevTools) and
 * summed up by self time: per package or file of the service, and per function.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** An npm package, a file of the service (its path from `src/`), Node's own module, or a V8 category. */
function fileOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`.replace(/^\(\((.*)\)\)$/, '($1)');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/(src\/.+)$/.exec(url);
  return own ? own[1] : url.replace(/^file:\/\//, '');
}

/** The `top` entries of `counts` by share of the samples, as rows for console.table. */
function topShares(counts: Map<string, number>, total: number, top: number) {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, count]) => ({ where, share: `${((100 * count) / total).toFixed(1)} %` }));
}

/** Self time per file and per function of a profile, printed. */
export function printProfile(profile: CpuProfile, top = 25): void {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const id of profile.samples) {
    const { url, functionName, lineNumber } = nodes.get(id)!.callFrame;
    const file = fileOf(url, functionName);
    byFile.set(file, (byFile.get(file) ?? 0) + 1);
    const fn = url ? `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}` : file;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  }
  const total = profile.samples.length;
  console.log('CPU time of the send by where it was spent (self time, per package or service file):');
  console.table(topShares(byFile, total, top));
  console.log('... and per function:');
  console.table(topShares(byFunction, total, top));
  console.log("... and the service's own functions with what they call (total time):");
  console.table(topShares(serviceTotals(profile, nodes), total, top));
}

/** Per function of the service's own files: the samples in it or in what it calls (each sample once). */
function serviceTotals(profile: CpuProfile, nodes: Map<number, ProfileNode>): Map<string, number> {
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const totals = new Map<string, number>();
  for (const id of profile.samples) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { url, functionName, lineNumber } = nodes.get(at)!.callFrame;
      const file = fileOf(url, functionName);
      if (!file.startsWith('src/')) continue;
      const fn = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
      if (seen.has(fn)) continue;
      seen.add(fn);
      totals.set(fn, (totals.get(fn) ?? 0) + 1);
    }
  }
  return totals;
}

/** With `BENCH_PROFILE` set: profiles this process from `start` to `stop`; without, does nothing. */
export function inProcessProfile(): { start(): Promise<void>; stop(file: string): Promise<void> } {
  if (!process.env.BENCH_PROFILE) return { start: () => Promise.resolve(), stop: () => Promise.resolve() };
  const session = new Session();
  return {
    async start() {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    },
    async stop(file) {
      const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      console.log(`CPU profile written to ${file}`);
      printProfile(profile);
    },
  };
}
