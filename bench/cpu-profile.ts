/**
 * Where a server's CPU time went, from a V8 `.cpuprofile` (`node --cpu-prof`): self time grouped by npm
 * package, by file of the service's own build, or by V8's own categories (GC, idle, program).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

function bucketOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (!url) return `(${functionName || 'native'})`.replace(/^\(\((.*)\)\)$/, '($1)');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  // The built server (dist/), or a bench that runs the service's compiled sources in-process.
  const own = /\/(?:dist|src)\/(.+)$/.exec(url);
  if (own) return `service: ${own[1]}`;
  if (url.startsWith('node:')) return url;
  return url;
}

/** The `top` buckets by share of samples, as rows for console.table. */
export function summariseProfile(path: string, top = 15): { where: string; share: string }[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const bucketById = new Map(profile.nodes.map((node) => [node.id, bucketOf(node)]));
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const bucket = bucketById.get(id) ?? '(unknown)';
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  const total = profile.samples.length;
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, count]) => ({ where, share: `${((100 * count) / total).toFixed(1)} %` }));
}

/** A function as a profile names it: its name, and the file and line it is defined at. */
function functionOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return `(${functionName || 'native'})`.replace(/^\(\((.*)\)\)$/, '($1)');
  const file = /node_modules\/(.+)$/.exec(url)?.[1] ?? /\/(?:dist|src)\/(.+)$/.exec(url)?.[1] ?? url;
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

/**
 * The `top` functions by total time (their own and their callees', each sample counted once per function
 * however deep the recursion), with their self time beside: where a route's time goes, not only where it
 * ends.
 */
export function summariseFunctions(
  path: string,
  top = 40,
): { function: string; total: string; self: string }[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const id of profile.samples) {
    const leaf = functionOf(byId.get(id)!);
    self.set(leaf, (self.get(leaf) ?? 0) + 1);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const name = functionOf(byId.get(at)!);
      if (!seen.has(name)) total.set(name, (total.get(name) ?? 0) + 1);
      seen.add(name);
    }
  }
  const share = (count: number) => `${((100 * count) / profile.samples.length).toFixed(1)} %`;
  return [...total]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, count]) => ({ function: name, total: share(count), self: share(self.get(name) ?? 0) }));
}

/**
 * With BENCH_PROFILE set, the node arguments that make a server write a CPU profile when it exits, and a
 * report of it (`top` buckets) once it has, with BENCH_PROFILE=functions also by function; without, no
 * arguments and no report.
 */
export function serverProfile(): { nodeArgs: string[]; report(title: string, top?: number): void } {
  if (!process.env.BENCH_PROFILE) return { nodeArgs: [], report: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  return {
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    report(title, top) {
      const [file] = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
      console.log(`Server CPU time by where it was spent (self time, ${title}):`);
      console.table(summariseProfile(join(dir, file), top));
      if (process.env.BENCH_PROFILE === 'functions') {
        console.log(`By function (total and self time, ${title}); the profile: ${join(dir, file)}`);
        console.table(summariseFunctions(join(dir, file), 80));
      }
    },
  };
}
