/**
 * The newsletter preference page in a real browser (`npm run test:browser`, after the Swagger UI gate): the
 * built server on a free port with the embedded dev database and no SMTP (mail lands in DATA_DIR/outbox),
 * headless Chromium from the system (CHROMIUM_PATH, default /usr/bin/chromium) with JavaScript switched off.
 *
 * Staff declare two topics (one named with markup), add a subscriber and send a campaign about one topic;
 * the gate takes the unsubscribe link from the mail in the outbox, opens it, checks the page (a checkbox per
 * topic, the markup shown as text, no Content-Security-Policy violation, nothing loaded from elsewhere),
 * unticks a topic and saves, then reads the person's `droppedTopics` through the API and reopens the page.
 * Leaves artifacts/preference-page.png and artifacts/preference-page-server.log.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import {
  ARTIFACTS_DIR,
  type BuiltServer,
  callJson,
  loginAdmin,
  startBuiltServer,
} from '../shared/built-server';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The whole run, server start-up included (the dev database starts on a loaded machine). */
const RUN_TIMEOUT_MS = 240_000;
const STEP_TIMEOUT_MS = 15_000;
const SCREENSHOT = join(ARTIFACTS_DIR, 'preference-page.png');
const APP_ID = 'prefs-shop';
const PERSON = 'ada@example.com';
const MARKUP_NAME = 'Offers <b>& deals</b>';

/** The first List-Unsubscribe URL of a mail in the outbox, once one is there. */
async function unsubscribeLinkFromOutbox(outbox: string): Promise<string> {
  const deadline = Date.now() + STEP_TIMEOUT_MS * 2;
  while (Date.now() < deadline) {
    const mails = existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : [];
    for (const name of mails) {
      const raw = readFileSync(join(outbox, name), 'latin1').replace(/\r?\n[ \t]+/g, ' ');
      const link = /^List-Unsubscribe: <([^>]+)>/im.exec(raw);
      // A long URL is folded inside its angle brackets, where whitespace does not count (RFC 2369).
      if (link) return link[1].replace(/\s+/g, '');
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`no mail with List-Unsubscribe in ${outbox}`);
}

async function prepare(server: BuiltServer): Promise<void> {
  const auth = { authorization: `Bearer ${await loginAdmin(server.baseUrl)}` };
  const call = (method: string, path: string, body?: object) =>
    callJson(server.baseUrl, method, path, auth, body);
  await call('POST', '/admin/apps', { id: APP_ID, name: 'Prefs shop' });
  await call('PUT', `/admin/${APP_ID}/newsletter/topics`, {
    topics: [
      { key: 'offers', name: MARKUP_NAME },
      { key: 'product-news', name: 'Product news' },
    ],
  });
  await call('POST', `/admin/${APP_ID}/newsletter/subscribers`, { email: PERSON, firstName: 'Ada' });
  const campaign = (await call('POST', `/admin/${APP_ID}/newsletter/campaigns`, {
    name: 'News',
    subject: 'News',
    htmlContent: '<p>Hi</p><p><a href="{{unsubscribeUrl}}">Preferences</a></p>',
    topic: 'product-news',
  })) as { data: { _id: string } };
  await call('POST', `/admin/${APP_ID}/newsletter/campaigns/${campaign.data._id}/send`);
}

async function droppedTopics(server: BuiltServer): Promise<string[]> {
  const auth = { authorization: `Bearer ${await loginAdmin(server.baseUrl)}` };
  const list = (await callJson(
    server.baseUrl,
    'GET',
    `/admin/${APP_ID}/newsletter/subscribers?search=${encodeURIComponent(PERSON)}`,
    auth,
  )) as { data: { subscriptions: { appId: string; droppedTopics: string[] }[] }[] };
  return list.data[0]?.subscriptions.find((s) => s.appId === APP_ID)?.droppedTopics ?? [];
}

async function run(server: BuiltServer, outbox: string, browsers: Browser[]): Promise<void> {
  await prepare(server);
  const link = await unsubscribeLinkFromOutbox(outbox);
  const url = `${server.baseUrl}${new URL(link).pathname}`;
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: STEP_TIMEOUT_MS,
  });
  browsers.push(browser);
  // Without JavaScript: the page must work as plain HTML forms.
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  const foreign: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(server.baseUrl)) foreign.push(request.url());
  });
  try {
    await page.goto(url, { waitUntil: 'load' });
    const offers = page.locator('input[type=checkbox][value="offers"]');
    if (!(await offers.isChecked())) throw new Error('the topic "offers" is not shown as kept');
    const label = page.locator('label', { has: offers });
    if ((await label.textContent())?.trim() !== MARKUP_NAME)
      throw new Error(`the topic name is not shown as written: ${await label.innerHTML()}`);
    if ((await label.locator('b').count()) > 0) throw new Error('the topic name was rendered as markup');
    console.log('  the page lists both topics; a name with markup is shown as text');

    await offers.uncheck();
    await page.locator('button[value="save"]').click();
    await page.locator('h1', { hasText: 'Your choices are saved' }).waitFor();
    const dropped = await droppedTopics(server);
    if (dropped.join() !== 'offers')
      throw new Error(`droppedTopics after saving: ${JSON.stringify(dropped)}`);
    console.log('  unticking a topic and saving drops it (droppedTopics: ["offers"])');

    await page.goto(url, { waitUntil: 'load' });
    if (await page.locator('input[value="offers"]').isChecked())
      throw new Error('the page shows the dropped topic as kept');
    if (!(await page.locator('input[value="product-news"]').isChecked()))
      throw new Error('the page shows the kept topic as dropped');
    if (violations.length) throw new Error(`Content-Security-Policy violations: ${violations.join('; ')}`);
    if (foreign.length) throw new Error(`the page loaded from elsewhere: ${foreign.join(', ')}`);
    console.log('  no JavaScript, no CSP violation, nothing loaded from elsewhere');
  } finally {
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await page.screenshot({ path: SCREENSHOT }).catch(() => undefined);
    console.log(`  screenshot: ${SCREENSHOT}`);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  console.log('Preference page browser test');
  let server: BuiltServer | undefined;
  const browsers: Browser[] = [];
  const dataDir = join(mkdtempSync(join(tmpdir(), 'prefs-gate-')), 'data');
  const cleanUp = async (): Promise<void> => {
    await Promise.all(browsers.map((browser) => browser.close().catch(() => undefined)));
    await server?.stop();
  };
  const watchdog = setTimeout(() => {
    console.error(`FAIL: preference page browser test exceeded ${RUN_TIMEOUT_MS / 1000} s`);
    void cleanUp().finally(() => process.exit(1));
  }, RUN_TIMEOUT_MS);
  try {
    server = await startBuiltServer({
      logFile: join(ARTIFACTS_DIR, 'preference-page-server.log'),
      env: { DATA_DIR: dataDir, SMTP_URL: '', EMAIL_WORKER_ENABLED: 'true' },
    });
    await run(server, join(dataDir, 'outbox'), browsers);
    console.log(`PASS: preference page browser test in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(
      `FAIL: preference page browser test: ${error instanceof Error ? error.message : String(error)}`,
    );
    if (server) console.error(`  server log: ${server.logFile}`);
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanUp();
  }
}

void main();
