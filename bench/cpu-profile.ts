/**
 * Where a server's CPU time went, from a V8 `.cpuprofile` (`node --cpu-prof`): self time grouped by npm
 * package, by file of the service's own build, or by V8's own categories (GC, idle, program).
 */
import { readFileSync } from 'node:fs';

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
