/**
 * Swagger UI in a real browser (`npm run test:browser`, a CI gate): the built server on a free port with the
 * embedded dev database, headless Chromium from the system (CHROMIUM_PATH, default /usr/bin/chromium; no
 * browser is downloaded), driven by playwright-core.
 *
 * Checks, all from the UI as staff would (the script never handles a token): /docs renders one block per
 * operation of /docs-json (naming the missing ones); the Authorize dialog opens on the `bearer` scheme;
 * "Try it out" on POST /auth/login signs in (the `bearer` scheme is then authorized without a pasted token);
 * one write, POST /admin/apps with its example body as shown, answers 201; one read, GET /admin/apps/{id}
 * of that app, answers 200. Leaves artifacts/swagger-ui.png (the page after the read) and
 * artifacts/swagger-ui-server.log.
 *
 * The page is opened over plain http by a host name, as on an intranet host or a dev box, not by
 * localhost or 127.0.0.1: browsers count those (and all of 127/8) as trustworthy and never upgrade their
 * requests to https, so a policy that breaks every other host would pass there. Chromium resolves the
 * name to the server's 127.0.0.1 (a host resolver rule): no DNS, no other listening address.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ADMIN, ARTIFACTS_DIR, type BuiltServer, startBuiltServer } from '../shared/built-server';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * The whole run, server start-up included; CI must not hang on a stuck browser. A loaded machine takes
 * two minutes.
 */
const RUN_TIMEOUT_MS = 240_000;
/** Each browser step (a selector to appear, a click, a navigation). */
const STEP_TIMEOUT_MS = 15_000;
const SCREENSHOT = join(ARTIFACTS_DIR, 'swagger-ui.png');
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
/** The name the page is opened by: not a trustworthy origin to the browser (see the header). */
const PAGE_HOST = 'staff-intranet.example.test';

/** The server's address as staff on another machine would type it: same port, PAGE_HOST for 127.0.0.1. */
function pageUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.hostname = PAGE_HOST;
  return url.origin;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> } }>>;
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

/** The `bearer` scheme's box in the Authorize dialog (`end-user` is a bearer scheme too: match by name). */
function bearerScheme(page: Page) {
  return page
    .locator('.modal-ux .auth-container')
    .filter({ has: page.locator('h4', { hasText: /^bearer\b/ }) });
}

async function openAuthorizeDialog(page: Page) {
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.modal-ux');
  await dialog.waitFor();
  return dialog;
}

async function closeAuthorizeDialog(page: Page): Promise<void> {
  // Each scheme has its own "Close" button; the dialog's × closes it whatever the scheme count.
  await page.locator('.modal-ux button.close-modal').click();
  await page.locator('.modal-ux').waitFor({ state: 'detached' });
}

/** The dialog lists `bearer` first and opens on it: its input has the focus, nothing scrolled past it. */
async function checkAuthorizeDialogOpensOnBearer(page: Page): Promise<void> {
  await openAuthorizeDialog(page);
  const first = (await page.locator('.modal-ux .auth-container h4').first().textContent())?.trim() ?? '';
  if (!/^bearer\b/.test(first)) throw new Error(`the Authorize dialog lists "${first}" first, not bearer`);
  if ((await bearerScheme(page).count()) !== 1)
    throw new Error('the Authorize dialog has no `bearer` scheme');
  // The focus moves once the dialog is drawn (a frame or two after it appears).
  await bearerScheme(page)
    .locator('input:focus')
    .waitFor({ timeout: 2_000 })
    .catch(() => {
      throw new Error('the Authorize dialog opens with the focus outside the `bearer` scheme');
    });
  console.log('  Authorize dialog opens on `bearer`');
  await closeAuthorizeDialog(page);
}

function operationBlock(page: Page, method: string, path: string) {
  return page
    .locator(`.opblock.opblock-${method}`)
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
}

/**
 * Opens an operation, "Try it out", optionally sets path parameters and the JSON body, "Execute"; returns the
 * status and the rendered response body once the answer is in.
 */
async function tryItOut(
  page: Page,
  method: string,
  path: string,
  input: { parameters?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: string; body: string }> {
  const block = operationBlock(page, method, path);
  if ((await block.count()) !== 1)
    throw new Error(`no single operation block for ${method.toUpperCase()} ${path}`);
  await block.locator('.opblock-summary').click();
  await block.locator('button.try-out__btn').click();
  for (const [name, value] of Object.entries(input.parameters ?? {})) {
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  if (input.body !== undefined) {
    await block.locator('textarea.body-param__text').fill(JSON.stringify(input.body, null, 2));
  }
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  // The rendered response body (the first <pre> of the live response; the headers come after it).
  const body = (
    (await block.locator('.live-responses-table .response-col_description pre').first().textContent()) ?? ''
  ).trim();
  return { status: (await status.textContent())?.trim() ?? '', body };
}

function expectStatus(operation: string, answer: { status: string; body: string }, expected: string): void {
  if (!answer.status.startsWith(expected)) {
    throw new Error(
      `${operation} from Swagger UI answered ${answer.status || 'nothing'}: ${answer.body.slice(0, 300)}`,
    );
  }
  console.log(`  ${operation} from "Try it out": ${expected}`);
}

/**
 * Sign-in as staff do it: "Try it out" on POST /auth/login with their e-mail and password. The UI then holds
 * the token: the `bearer` scheme shows as authorized (a Logout button) without anything pasted.
 */
async function signInFromTheUi(page: Page): Promise<void> {
  if (await page.locator('.auth-wrapper button.authorize.locked').count()) {
    throw new Error('the page is authorized before anyone signed in');
  }
  const answer = await tryItOut(page, 'post', '/auth/login', { body: ADMIN });
  expectStatus('POST /auth/login', answer, '200');
  await page
    .locator('.auth-wrapper button.authorize.locked')
    .waitFor()
    .catch(() => {
      throw new Error('POST /auth/login answered 200 but the page is still not authorized');
    });
  await openAuthorizeDialog(page);
  await bearerScheme(page).locator('button', { hasText: 'Logout' }).waitFor();
  await closeAuthorizeDialog(page);
  console.log('  signed in from the UI: `bearer` authorized by the login answer');
}

/** One write with the example body exactly as Swagger UI pre-fills it, then one read of what it created. */
async function createAndReadAnApp(page: Page, document: OpenApiDocument): Promise<void> {
  const example = document.paths['/admin/apps'].post.requestBody?.content['application/json']?.example as
    { id?: unknown; name?: unknown } | undefined;
  if (typeof example?.id !== 'string' || typeof example.name !== 'string') {
    throw new Error(`POST /admin/apps has no example with an id and a name: ${JSON.stringify(example)}`);
  }
  const created = await tryItOut(page, 'post', '/admin/apps');
  expectStatus('POST /admin/apps (its example body)', created, '201');
  const read = await tryItOut(page, 'get', '/admin/apps/{id}', { parameters: { id: example.id } });
  expectStatus(`GET /admin/apps/${example.id}`, read, '200');
  if (!read.body.includes(example.name)) {
    throw new Error(
      `GET /admin/apps/${example.id}: the body does not name the app: ${read.body.slice(0, 300)}`,
    );
  }
}

async function run(server: BuiltServer, browsers: Browser[]): Promise<void> {
  const document = (await (await fetch(`${server.baseUrl}/docs-json`)).json()) as OpenApiDocument;
  const expected = documentedOperations(document);
  if (expected.length === 0) throw new Error('/docs-json lists no operations');

  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: STEP_TIMEOUT_MS,
    args: [`--host-resolver-rules=MAP ${PAGE_HOST} 127.0.0.1`],
  });
  browsers.push(browser);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // A blank page says why: the scripts and styles that did not load, and where they were asked for.
  const failedRequests: string[] = [];
  page.on('requestfailed', (request) =>
    failedRequests.push(`${request.url()} (${request.failure()?.errorText ?? 'failed'})`),
  );

  try {
    const docs = `${pageUrl(server.baseUrl)}/docs`;
    console.log(`  opening ${docs} (plain http, a host the browser does not trust)`);
    await page.goto(docs, { waitUntil: 'load' });
    // The UI renders after fetching /docs-json; the last block appearing means the list is complete.
    await page
      .locator('.opblock')
      .nth(expected.length - 1)
      .waitFor()
      .catch((error: unknown) => {
        if (failedRequests.length === 0) throw error;
        throw new Error(`/docs did not render; failed requests: ${failedRequests.join(', ')}`);
      });
    await checkEveryOperationRendered(page, expected);
    await checkAuthorizeDialogOpensOnBearer(page);
    await signInFromTheUi(page);
    await createAndReadAnApp(page, document);
    if (pageErrors.length) throw new Error(`script errors on /docs: ${pageErrors.join('; ')}`);
  } finally {
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    // The viewport at the last live response when it got that far, else the top of the page.
    await page
      .locator('.live-responses-table')
      .last()
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
