/**
 * Swagger UI in a real browser (`npm run test:browser`, a CI gate): the built server on a free port with the
 * embedded dev database, headless Chromium from the system (CHROMIUM_PATH, default /usr/bin/chromium; no
 * browser is downloaded), driven by playwright-core.
 *
 * Checks that /docs renders one block per operation of /docs-json (naming the missing ones), that the
 * Authorize dialog takes the admin's token for the `bearer` scheme, and that "Try it out" on GET /auth/me
 * shows a 200. Leaves artifacts/swagger-ui.png (the page after the call) and artifacts/swagger-ui-server.log.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ADMIN, ARTIFACTS_DIR, type BuiltServer, loginAdmin, startBuiltServer } from '../shared/built-server';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The whole run, server start-up included; CI must not hang on a stuck browser. */
const RUN_TIMEOUT_MS = 110_000;
/** Each browser step (a selector to appear, a click, a navigation). */
const STEP_TIMEOUT_MS = 15_000;
const SCREENSHOT = join(ARTIFACTS_DIR, 'swagger-ui.png');
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
}

/** "GET /auth/me" for each operation of the document. */
function documentedOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => HTTP_METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/** The little of the DOM read in the page (this project compiles without the DOM library). */
interface RenderedElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): RenderedElement | null;
}

/** "GET /auth/me" for each operation block Swagger UI rendered. */
async function renderedOperations(page: Page): Promise<string[]> {
  return page.$$eval('.opblock', (blocks: RenderedElement[]) =>
    blocks.map((block) => {
      const method = block.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '?';
      const pathElement = block.querySelector('.opblock-summary-path');
      const path = pathElement?.getAttribute('data-path') ?? pathElement?.textContent?.trim() ?? '?';
      return `${method.toUpperCase()} ${path}`;
    }),
  );
}

async function checkEveryOperationRendered(page: Page, expected: string[]): Promise<void> {
  const rendered = await renderedOperations(page);
  const renderedSet = new Set(rendered);
  const missing = expected.filter((operation) => !renderedSet.has(operation));
  if (missing.length > 0 || rendered.length !== expected.length) {
    throw new Error(
      `Swagger UI rendered ${rendered.length} operation blocks for ${expected.length} operations in /docs-json` +
        (missing.length ? `; missing: ${missing.join(', ')}` : ''),
    );
  }
  console.log(`  ${rendered.length} of ${expected.length} operations rendered`);
}

/** Through the UI, as a person would: Authorize → the `bearer` scheme's value → Authorize → Close. */
async function authorize(page: Page, token: string): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.modal-ux');
  await dialog.waitFor();
  // One container per scheme; `end-user` is a bearer scheme too, so pick by the scheme's name.
  const scheme = dialog
    .locator('.auth-container')
    .filter({ has: page.locator('h4', { hasText: /^bearer\b/ }) });
  if ((await scheme.count()) !== 1) throw new Error('the Authorize dialog has no `bearer` scheme');
  await scheme.locator('input').fill(token);
  await scheme.locator('button.authorize').click();
  // Swagger UI swaps the button to "Logout" once the value is accepted.
  await scheme.locator('button', { hasText: 'Logout' }).waitFor();
  // Each scheme has its own "Close" button; the dialog's × closes it whatever the scheme count.
  await dialog.locator('button.close-modal').click();
  await dialog.waitFor({ state: 'detached' });
}

async function tryAuthMe(page: Page): Promise<void> {
  const block = page
    .locator('.opblock.opblock-get')
    .filter({ has: page.locator('.opblock-summary-path[data-path="/auth/me"]') });
  if ((await block.count()) !== 1) throw new Error('no single operation block for GET /auth/me');
  await block.locator('.opblock-summary').click();
  await block.locator('button.try-out__btn').click();
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  const code = (await status.textContent())?.trim() ?? '';
  // The rendered response body (the first <pre> of the live response; the headers come after it).
  const body = (
    (await block.locator('.live-responses-table .response-col_description pre').first().textContent()) ?? ''
  ).trim();
  if (!code.startsWith('200')) {
    throw new Error(`GET /auth/me from Swagger UI answered ${code || 'nothing'}: ${body.slice(0, 300)}`);
  }
  // The bearer token really went out: the body is the signed-in admin.
  if (!body.includes(ADMIN.email))
    throw new Error(`GET /auth/me: the body does not name the admin: ${body.slice(0, 300)}`);
  console.log('  GET /auth/me from "Try it out": 200');
}

async function run(server: BuiltServer, browsers: Browser[]): Promise<void> {
  const token = await loginAdmin(server.baseUrl);
  const document = (await (await fetch(`${server.baseUrl}/docs-json`)).json()) as OpenApiDocument;
  const expected = documentedOperations(document);
  if (expected.length === 0) throw new Error('/docs-json lists no operations');

  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: STEP_TIMEOUT_MS,
  });
  browsers.push(browser);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));

  try {
    await page.goto(`${server.baseUrl}/docs`, { waitUntil: 'load' });
    // The UI renders after fetching /docs-json; the last block appearing means the list is complete.
    await page
      .locator('.opblock')
      .nth(expected.length - 1)
      .waitFor();
    await checkEveryOperationRendered(page, expected);
    await authorize(page, token);
    await tryAuthMe(page);
    if (pageErrors.length) throw new Error(`script errors on /docs: ${pageErrors.join('; ')}`);
  } finally {
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    // The viewport at GET /auth/me's live response when it got that far, else the top of the page.
    await page
      .locator('.live-responses-table')
      .first()
      .scrollIntoViewIfNeeded({ timeout: 2_000 })
      .catch(() => undefined);
    await page.screenshot({ path: SCREENSHOT }).catch(() => undefined);
    console.log(`  screenshot: ${SCREENSHOT}`);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  console.log('Swagger UI browser test');
  let server: BuiltServer | undefined;
  const browsers: Browser[] = [];
  const cleanUp = async (): Promise<void> => {
    await Promise.all(browsers.map((browser) => browser.close().catch(() => undefined)));
    await server?.stop();
  };
  const watchdog = setTimeout(() => {
    console.error(`FAIL: Swagger UI browser test exceeded ${RUN_TIMEOUT_MS / 1000} s`);
    void cleanUp().finally(() => process.exit(1));
  }, RUN_TIMEOUT_MS);
  try {
    server = await startBuiltServer({ logFile: join(ARTIFACTS_DIR, 'swagger-ui-server.log') });
    await run(server, browsers);
    console.log(`PASS: Swagger UI browser test in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(`FAIL: Swagger UI browser test: ${error instanceof Error ? error.message : String(error)}`);
    if (server) console.error(`  server log: ${server.logFile}`);
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanUp();
  }
}

void main();
