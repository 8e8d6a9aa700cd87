/**
 * Unit tests (`src/**\/*.spec.ts`) and e2e tests (`test/**\/*.e2e-spec.ts`) in one run. The global setup starts
 * one in-memory dev database; each test file gets a database of its own on it.
 */
module.exports = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  testRegex: '(src/.*\\.spec|test/.*\\.e2e-spec|test/query-shapes/.*\\.spec)\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // Node's environment, ending each file's template workers after all its hooks (test/setup/file-environment.js).
  testEnvironment: '<rootDir>/test/setup/file-environment.js',
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFiles: ['<rootDir>/test/setup/test-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/setup/file-hooks.ts'],
  // The index-coverage gate counts as one more test (docs/operations/index-coverage.md); before 'default', whose summary counts it.
  reporters: ['<rootDir>/test/setup/index-coverage-reporter.js', 'default'],
  // A safety net, not a speed claim: on a busy 2-core machine one test may take minutes (docs/development.md,
  // "Writing tests"); a test waits for events with deadlines below this.
  testTimeout: 120_000,
  maxWorkers: 2,
  // A worker whose heap holds more than this after a file is replaced before the next: a smaller process
  // leaves faster at the end of the run, where Jest allows it 500 ms, and collects its garbage faster
  // meanwhile (docs/development.md, "Nothing idle holds the process open").
  workerIdleMemoryLimit: '512MB',
};
