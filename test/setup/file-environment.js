const { TestEnvironment } = require('jest-environment-node');

/** Where a test file leaves the function that ends its template workers (test/setup/file-hooks.ts). */
const CLOSE_TEMPLATE_SANDBOX = Symbol.for('admin-service.test.closeTemplateSandbox');

/**
 * Jest's Node environment, which ends the test file's template worker threads once the file is done: after
 * all of its `afterAll` hooks (the apps are closed, nothing renders any more) and before the next file.
 * Left to the process's exit, a thread still loading its modules kept the Jest worker alive past Jest's grace
 * period ("A worker process has failed to exit gracefully").
 */
class FileEnvironment extends TestEnvironment {
  async teardown() {
    try {
      const close = this.global[CLOSE_TEMPLATE_SANDBOX];
      if (typeof close === 'function') await close();
    } finally {
      await super.teardown();
    }
  }
}

/**
 * A Jest worker ends by letting its event loop run dry, and Node then tears its V8 heap down (over a gigabyte
 * after a few hundred e2e tests) before the process leaves. On a loaded machine that outlasted the 500 ms
 * jest-worker allows before it kills the worker and prints "A worker process has failed to exit gracefully"
 * (docs/development.md, "Nothing idle holds the process open"). Exiting from the `exit` event skips the
 * teardown: the results are sent, and writes to the parent's pipes are synchronous. A leak still shows: an
 * open handle keeps the loop from running dry, so `exit` never comes and Jest still warns.
 *
 * Only in a worker (a child process with an IPC channel to Jest): a run in band loads this environment in
 * Jest's own process, whose later `exit` listener sets the failing exit code that this would cut short.
 */
if (typeof process.send === 'function') process.once('exit', (code) => process.exit(code));

module.exports = FileEnvironment;
