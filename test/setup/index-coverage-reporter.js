// @ts-check
const { dirname, join } = require('node:path');

// Jest's own transformer and result helpers, resolved as Jest's core resolves them (npm may nest them there).
const jestCore = dirname(require.resolve('@jest/core'));
const fromJest = (name) => require(require.resolve(name, { paths: [jestCore] }));
const { createScriptTransformer } = fromJest('@jest/transform');
const { addResult, createEmptyTestResult } = fromJest('@jest/test-result');

const GATE = join(__dirname, '..', 'query-shapes', 'coverage-gate.ts');
const TITLE = 'every recorded query shape is served by a declared index or allow-listed';

/**
 * The index-coverage gate (docs/operations/index-coverage.md). After the last test file, it judges every query shape the
 * run recorded (test/setup/global-setup.ts) and adds the verdict to Jest's results as one more test, so a
 * failure shows in the summary, in the exit code and in the JSON report that CI counts. A reporter, not a
 * global teardown: Jest writes its JSON report after the teardown, and a throwing teardown leaves none.
 * Listed before Jest's default reporter, so the summary already counts it.
 */
class IndexCoverageReporter {
  /**
   * @param {Set<import('@jest/test-result').TestContext>} testContexts
   * @param {import('@jest/test-result').AggregatedResult} results
   */
  async onRunComplete(testContexts, results) {
    const dir = process.env.QUERY_SHAPES_DIR;
    const [context] = testContexts;
    if (!dir || !context || results.wasInterrupted) return;
    // The gate is TypeScript: loaded through Jest's own transformer, as Jest loads the global setup.
    const transformer = await createScriptTransformer(context.config);
    /** @type {typeof import('../query-shapes/coverage-gate')} */
    const gate = await transformer.requireAndTranspileModule(GATE, undefined, {
      applyInteropRequireDefault: false,
      instrument: false,
      supportsDynamicImport: false,
      supportsExportNamespaceFrom: false,
      supportsStaticESM: false,
      supportsTopLevelAwait: false,
    });
    const verdict = gate.judgeRun(dir);
    if (!verdict.files) return;
    const passed = verdict.uncovered === 0;
    const message = [`Index coverage (${dir}):`, ...verdict.lines].join('\n');
    if (!passed) process.stderr.write(`\n${message}\n`);
    const testResult = {
      ...createEmptyTestResult(),
      testFilePath: join(context.config.rootDir, 'index coverage'),
      numPassingTests: passed ? 1 : 0,
      numFailingTests: passed ? 0 : 1,
      failureMessage: passed ? null : message,
      testResults: [
        {
          ancestorTitles: ['index coverage'],
          duration: 0,
          failureDetails: [],
          failureMessages: passed ? [] : [message],
          fullName: `index coverage ${TITLE}`,
          numPassingAsserts: passed ? 1 : 0,
          status: /** @type {const} */ (passed ? 'passed' : 'failed'),
          title: TITLE,
        },
      ],
    };
    // addResult counts a passed or failed suite but not the total Jest fixed at the start: without this,
    // the summary reads "141 of 140 total".
    results.numTotalTestSuites += 1;
    addResult(results, testResult);
  }
}

module.exports = IndexCoverageReporter;
