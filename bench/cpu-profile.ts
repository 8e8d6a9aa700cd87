/**
 * Where a server's CPU time went, from a V8 `.cpuprofile` (`node --cpu-prof`): self time grouped by npm
 * package, by file of the service's own build, or by V8's own categories (GC, idle, program).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
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
  const own = /\/dist\/(.+)$/.exec(url);
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

/**
 * With BENCH_PROFILE set, the node arguments that make a server write a CPU profile when it exits, and a
 * report of it (`top` buckets) once it has; without, no arguments and no report.
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
    },
  };
}
