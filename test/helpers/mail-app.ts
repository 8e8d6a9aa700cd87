import { createTestApp, resetDatabase, type TestApp, type TestAppOptions } from './app';
import { setEnv } from './env';
import { startSmtpServer, type TestSmtpServer } from './smtp';

export interface MailApp {
  t: TestApp;
  smtp: TestSmtpServer;
}

export interface MailAppOptions extends TestAppOptions {
  /** Environment the app starts with (beside SMTP_URL), put back as it was after the file. */
  env?: Record<string, string>;
  /** Runs before each reset of the database, e.g. to write what the last test left buffered first. */
  beforeReset?: (t: TestApp) => Promise<unknown>;
}

/**
 * The set-up every test file that sends e-mail shares: a real SMTP server (test/helpers/smtp.ts),
 * `SMTP_URL` and `env` set, the real app started on them; before each test the database emptied and the
 * received mail and attempts forgotten; after the file the app and the server closed and the environment
 * put back. Call it first in a describe (its hooks then run before the file's own); `t` and `smtp` are
 * there once its beforeAll has run. A test that closes the app starts another and sets it as `t`, which the
 * fixture then resets and closes. `options` may be a function, read when the app starts: for values known
 * only once the file's own earlier beforeAll has run (e.g. a test DNS server's address).
 */
export function useMailApp(options: MailAppOptions | (() => MailAppOptions) = {}): MailApp {
  const fixture = {} as MailApp;
  let beforeReset: MailAppOptions['beforeReset'];
  let restoreEnv: () => void = () => undefined;
  let starting: Promise<void> = Promise.resolve();
  const start = async () => {
    const {
      env = {},
      beforeReset: reset,
      ...appOptions
    } = typeof options === 'function' ? options() : options;
    beforeReset = reset;
    fixture.smtp = await startSmtpServer();
    restoreEnv = setEnv({ SMTP_URL: fixture.smtp.url, ...env });
    fixture.t = await createTestApp(appOptions);
  };
  beforeAll(() => (starting = start()));
  afterAll(async () => {
    // A start that outlived Jest's limit still ends later: wait for it, or the app it starts is never
    // closed and keeps the test worker alive ("a worker process has failed to exit gracefully").
    await starting.catch(() => undefined);
    await fixture.t?.close();
    await fixture.smtp?.close();
    restoreEnv();
  });
  beforeEach(async () => {
    await beforeReset?.(fixture.t);
    await resetDatabase(fixture.t.connection);
    fixture.smtp.received.length = 0;
    fixture.smtp.attempts.length = 0;
  });
  return fixture;
}
