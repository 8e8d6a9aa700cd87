import { closeTemplateSandbox } from '../../src/email/templates/template-sandbox';

/**
 * Runs after each test file: its template workers (threads of this Jest worker, one pool per file's module
 * registry) are ended and waited for. Left to the process's exit, a worker thread still loading its modules
 * kept the Jest worker alive past Jest's grace period ("A worker process has failed to exit gracefully").
 */
afterAll(() => closeTemplateSandbox());
