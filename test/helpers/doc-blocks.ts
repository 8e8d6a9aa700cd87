import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** The bash block of `file` between `<!-- name:start -->` and `<!-- name:end -->`; throws when it is gone. */
export function markedBashBlock(file: string, name: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const marked = new RegExp(
    `<!-- ${name}:start -->\\s*\`\`\`bash\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`,
  ).exec(text);
  if (!marked) throw new Error(`${file} has no \`\`\`bash block between the ${name}:start/end markers`);
  return marked[1];
}

export interface ExampleBlock {
  file: string;
  line: number;
  script: string;
}

/**
 * Every shell example of `file` (fenced `sh` or `bash` at the start of a line), in order, except those right
 * after a `<!-- not-run: why -->` comment (commands for another terminal, or for a state the page's flow does
 * not reach).
 */
export function exampleBlocks(file: string): ExampleBlock[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const blocks: ExampleBlock[] = [];
  for (const match of text.matchAll(/(<!-- not-run:[^>]*-->\s*)?^```(?:sh|bash)\n([\s\S]*?)^```/gm)) {
    if (match[1]) continue;
    blocks.push({ file, line: text.slice(0, match.index).split('\n').length + 1, script: match[2] });
  }
  return blocks;
}

export interface BashRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script as a reader would paste it, with two differences that make a broken example fail here: the
 * first failing command stops it (`-e`, `pipefail`), and `curl` fails on an HTTP error answer (still showing
 * the answer). Only PATH, HOME and the given variables are passed on.
 */
export function runBash(script: string, env: Record<string, string>, cwd: string): Promise<BashRun> {
  const strictCurl = 'curl() { command curl --fail-with-body "$@"; }\n';
  return new Promise((done, fail) => {
    const bash = spawn('bash', ['-e', '-o', 'pipefail', '-s'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    bash.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    bash.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    bash.once('error', fail);
    bash.once('exit', (code) => done({ code, stdout, stderr }));
    bash.stdin.end(strictCurl + script);
  });
}
