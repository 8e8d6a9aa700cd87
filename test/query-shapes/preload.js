// @ts-check
/**
 * Loaded with `node --require` into every Node process of a test run (NODE_OPTIONS, set by
 * test/setup/global-setup.ts), so the service processes tests start record their query shapes as the Jest
 * workers do, while the service itself ships no recorder. Jest's own processes and tools (anything run from
 * node_modules) are left alone. The recorder is TypeScript: compiled on load, file by file, and cached.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/**
 * Every process of a run compiles the same files: the JavaScript is kept by content hash, so only the first
 * process pays for loading the TypeScript compiler (about 1.4 s of CPU; a cached start costs milliseconds).
 */
const CACHE_DIR = join(tmpdir(), 'admin-service-query-shapes-preload');

/** @param {string} source @param {string} filename */
function compiled(source, filename) {
  const key = createHash('sha256').update(filename).update('\0').update(source).digest('hex');
  const cached = join(CACHE_DIR, `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    const ts = require('typescript');
    const { outputText } = ts.transpileModule(source, {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    });
    mkdirSync(CACHE_DIR, { recursive: true });
    // Written under a unique name, then renamed: a process never reads another's half-written file.
    const partial = `${cached}.${process.pid}.tmp`;
    writeFileSync(partial, outputText);
    renameSync(partial, cached);
    return outputText;
  }
}

const entry = process.argv[1] ?? '';
if (process.env.QUERY_SHAPES_DIR && entry !== '' && !/[\\/]node_modules[\\/]/.test(entry)) {
  require.extensions['.ts'] = (module, filename) => {
    const outputText = compiled(readFileSync(filename, 'utf8'), filename);
    /** @type {{ _compile(code: string, file: string): void }} */ (/** @type {unknown} */ (module))._compile(
      outputText,
      filename,
    );
  };
  require('./query-shape-recorder.ts').registerQueryShapeRecorder();
}
