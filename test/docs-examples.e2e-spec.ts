import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, type ApiProcess } from './helpers/api-process';
import { type BashRun, exampleBlocks, markedBashBlock, runBash } from './helpers/doc-blocks';
import { compileWorker, killAll, type WorkerProcess, COMPILE_HOOK_MS } from './helpers/worker-process';

/**
 * The API guide's pages in the order a reader who did the walkthrough might follow them: each page's shell
 * examples continue from the variables the earlier ones left (staff last: it erases a person).
 */
const PAGES = [
  'docs/api/app-backends.md',
  'docs/api/browser-forms.md',
  'docs/api/providers.md',
  'docs/api/newsletters.md',
  'docs/api/staff.md',
];

/**
 * Every shell example of the API guide (docs/api/), pasted into one bash session after the README's
 * walkthrough, against the service as `npm start` runs it without SMTP_URL (mail goes to DATA_DIR/outbox,
 * where the magic-link example reads its token). A command that fails, or a curl that gets an error answer,
 * fails the test with the example's page and line.
 */
describe('The API guide’s shell examples, pasted after the walkthrough', () => {
  let api: ApiProcess;
  const processes: WorkerProcess[] = [];
  const runs: { where: string; run: BashRun }[] = [];

  beforeAll(async () => {
    const compiled = await compileWorker();
    const dataDir = process.env.DATA_DIR!;
    api = await startApi(compiled, 'api', {
      MONGODB_URI: process.env.MONGODB_URI!,
      SMTP_URL: '',
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: dataDir,
      BCRYPT_COST: '4',
      CHAT_WORKER_ENABLED: 'false',
      ADMIN_EMAIL: 'admin@example.com',
      ADMIN_PASSWORD: 'change-me-now',
      WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
    processes.push(api);
    // One shell, as a reader keeps it: each block is run on the variables the earlier ones left, and prints a
    // line once it is through, so a failure is named by the first block without one.
    const blocks = [
      { file: 'README.md', line: 0, script: markedBashBlock('README.md', 'walkthrough') },
      ...PAGES.flatMap(exampleBlocks),
      // Pasted again after every page (staff's GDPR delete included): the examples leave the walkthrough's
      // people mailable, and nothing in the reader's working directory.
      { file: 'README.md (again)', line: 0, script: markedBashBlock('README.md', 'walkthrough') },
      {
        file: 'after all examples',
        line: 0,
        script:
          '[ "$SENT" -ge 3 ] || { echo "the walkthrough again sent $SENT, not 3" >&2; exit 1; }\n' +
          '[ -z "$(ls -A)" ] || { echo "left in the working directory: $(ls -A)" >&2; exit 1; }\n',
      },
    ];
    const script = blocks
      .map((block, index) => `${block.script}\nprintf '\\nBLOCK DONE ${index}\\n'\n`)
      .join('\n');
    const run = await runBash(
      script,
      { API: api.baseUrl, DATA_DIR: dataDir },
      mkdtempSync(join(tmpdir(), 'docs-')),
    );
    const done = new Set([...run.stdout.matchAll(/^BLOCK DONE (\d+)$/gm)].map((line) => Number(line[1])));
    blocks.forEach((block, index) =>
      runs.push({ where: `${block.file}:${block.line}`, run: done.has(index) ? { ...run, code: 0 } : run }),
    );
  }, COMPILE_HOOK_MS);

  afterAll(async () => {
    await killAll(processes);
  });

  it('has examples to run on every page', () => {
    for (const page of PAGES) expect(runs.some(({ where }) => where.startsWith(page))).toBe(true);
  });

  it('runs every example without a failing command', () => {
    const failed = runs.find(({ run }) => run.code !== 0);
    expect(
      failed && {
        where: failed.where,
        stdout: failed.run.stdout.slice(-3_000),
        stderr: failed.run.stderr.slice(-3_000),
        api: api.output().slice(-3_000),
      },
    ).toBeUndefined();
  });
});
