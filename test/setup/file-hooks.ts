import { closeTemplateSandbox } from '../../src/email/templates/template-sandbox';

/**
 * Hands the test environment this file's way to end its template workers (threads of this Jest worker, one
 * pool per file's module registry). The environment calls it at its teardown, after every hook of the file:
 * an `afterAll` here ran before the file's own `afterAll` hooks (Jest runs them in the order they were
 * added), so an app still closing could start a new pool whose threads outlived the file.
 */
(globalThis as Record<symbol, unknown>)[Symbol.for('admin-service.test.closeTemplateSandbox')] =
  closeTemplateSandbox;
