import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/** Directories never read: dependencies, builds, local data. */
const SKIPPED = new Set(['node_modules', 'dist', '.data', '.git', '.tools-build', 'target', 'coverage']);
/** Files whose comments may name a page: source, scripts, configuration. */
const CODE = /\.(ts|js|mjs|cjs|java|ya?ml|sh|xml|json)$|^Dockerfile|^\.env\.example$/;

function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path, keep);
    return keep(name) ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

/** Why `target` (a link written in `from`) does not resolve, or null when it does. */
function problemWith(from: string, target: string): string | null {
  const [pathPart, anchor] = target.split('#');
  const path = pathPart ? resolve(dirname(from), decodeURIComponent(pathPart)) : from;
  if (!existsSync(path)) return `${target}: no such file`;
  if (!anchor || !path.endsWith('.md')) return null;
  return anchorsOf(readFileSync(path, 'utf8')).has(anchor.toLowerCase())
    ? null
    : `${target}: no such heading`;
}

/** The relative link targets of a Markdown page, outside code blocks and code spans. */
function markdownLinks(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
  const targets: string[] = [];
  for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  for (const match of prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) targets.push(match[1]);
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/**
 * The project's pages are read by following links: in the README and docs/ (relative links and their
 * headings), and in code comments, which cite pages by their path from the repository root
 * (`docs/operations/index-coverage.md`, with an optional `#heading`). A moved or renamed page breaks none
 * of them silently.
 */
describe('Links between the documentation and the code', () => {
  const pages = [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs'), (name) => name.endsWith('.md'))];

  it('finds the pages and the code it checks', () => {
    expect(pages.length).toBeGreaterThan(10);
    expect(walk(join(ROOT, 'src'), (name) => CODE.test(name)).length).toBeGreaterThan(100);
  });

  it('resolves every relative link of the README and docs/, headings included', () => {
    const broken = pages.flatMap((page) =>
      markdownLinks(readFileSync(page, 'utf8')).flatMap((target) => {
        const problem = problemWith(page, target);
        return problem ? [`${relative(ROOT, page)}: ${problem}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('resolves every docs/ page that code and configuration name', () => {
    const files = [
      ...['src', 'test', 'tools', 'bench', 'docker', '.ci'].flatMap((dir) =>
        existsSync(join(ROOT, dir)) ? walk(join(ROOT, dir), (name) => CODE.test(name)) : [],
      ),
      ...readdirSync(ROOT)
        .filter((name) => CODE.test(name) && statSync(join(ROOT, name)).isFile())
        .map((name) => join(ROOT, name)),
    ];
    const broken = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [...text.matchAll(/(?<![\w/.-])docs\/[\w./-]*\.md(#[\w-]+)?/g)].flatMap(([cited]) => {
        const problem = problemWith(join(ROOT, 'README.md'), cited);
        return problem ? [`${relative(ROOT, file)}: ${problem}`] : [];
      });
    });
    expect(broken).toEqual([]);
  });
});
