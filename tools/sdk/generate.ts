/**
 * `npm run sdk:generate`: regenerates the official SDKs (clients/) from the document the built server
 * serves at /docs-json. `npm run sdk:check` (a CI gate) generates them into a temporary directory and fails
 * when anything differs from what is committed, so the document and the SDKs never drift apart.
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ARTIFACTS_DIR, startBuiltServer } from '../shared/built-server';
import {
  CLIENTS_DIR,
  generatePython,
  generateTypeScript,
  PYTHON_PACKAGE,
  START_TIMEOUT_MS,
} from './generators';

/** What the generators write, relative to clients/; everything else there is written by hand. */
const GENERATED = [
  'openapi.json',
  'typescript/src/schema.d.ts',
  `python/${PYTHON_PACKAGE}`,
  'python/.openapi-generator',
  'python/pyproject.toml',
  'python/requirements.txt',
  'python/.gitignore',
];

/** The document as the built server serves it, written with a trailing newline. */
async function fetchDocument(file: string): Promise<void> {
  const server = await startBuiltServer({
    logFile: join(ARTIFACTS_DIR, 'sdk', 'server.log'),
    startTimeoutMs: START_TIMEOUT_MS,
  });
  try {
    const response = await fetch(`${server.baseUrl}/docs-json`, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`/docs-json answered ${response.status}`);
    writeFileSync(file, `${JSON.stringify(await response.json(), null, 2)}\n`);
  } finally {
    await server.stop();
  }
}

async function generateInto(outDir: string): Promise<void> {
  mkdirSync(join(outDir, 'typescript', 'src'), { recursive: true });
  const document = join(outDir, 'openapi.json');
  await fetchDocument(document);
  generateTypeScript(document, join(outDir, 'typescript', 'src', 'schema.d.ts'));
  generatePython(document, join(outDir, 'python'));
}

function filesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  let stats;
  try {
    stats = statSync(full);
  } catch {
    return [];
  }
  if (!stats.isDirectory()) return [path];
  return readdirSync(full).flatMap((name) => filesUnder(root, join(path, name)));
}

/** The generated files that differ between the two trees (changed, added or gone). */
function differences(expected: string, actual: string): string[] {
  const files = new Set(
    GENERATED.flatMap((path) => [...filesUnder(expected, path), ...filesUnder(actual, path)]),
  );
  const read = (root: string, file: string) => {
    try {
      return readFileSync(join(root, file));
    } catch {
      return undefined;
    }
  };
  return [...files].sort().filter((file) => {
    const a = read(expected, file);
    const b = read(actual, file);
    return !a || !b || !a.equals(b);
  });
}

async function main(mode: string): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'sdk-'));
  try {
    await generateInto(scratch);
    if (mode === 'check') {
      const changed = differences(scratch, CLIENTS_DIR);
      if (changed.length > 0) {
        console.error(`clients/ differs from what /docs-json generates (run npm run sdk:generate):`);
        for (const file of changed) console.error(`  clients/${file}`);
        process.exitCode = 1;
        return;
      }
      console.log('clients/ matches what /docs-json generates');
      return;
    }
    for (const path of GENERATED) {
      rmSync(join(CLIENTS_DIR, path), { recursive: true, force: true });
      mkdirSync(dirname(join(CLIENTS_DIR, path)), { recursive: true });
      cpSync(join(scratch, path), join(CLIENTS_DIR, path), { recursive: true });
    }
    console.log(
      `Generated ${GENERATED.map((path) => relative(CLIENTS_DIR, join(CLIENTS_DIR, path))).join(', ')}`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main(process.argv[2] ?? 'generate').catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
