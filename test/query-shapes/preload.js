// @ts-check
/**
 * Loaded with `node --require` into every Node process of a test run (NODE_OPTIONS, set by
 * test/setup/global-setup.ts), so the service processes tests start record their query shapes as the Jest
 * workers do, while the service itself ships no recorder. Jest's own processes and tools (anything run from
 * node_modules) are left alone. The recorder is TypeScript: compiled on load, file by file.
 */
const { readFileSync } = require('node:fs');

const entry = process.argv[1] ?? '';
if (process.env.QUERY_SHAPES_DIR && entry !== '' && !/[\\/]node_modules[\\/]/.test(entry)) {
  const ts = require('typescript');
  require.extensions['.ts'] = (module, filename) => {
    const source = readFileSync(filename, 'utf8');
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
    /** @type {{ _compile(code: string, file: string): void }} */ (/** @type {unknown} */ (module))._compile(
      outputText,
      filename,
    );
  };
  require('./query-shape-recorder.ts').registerQueryShapeRecorder();
}
