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

module.exports = FileEnvironment;
