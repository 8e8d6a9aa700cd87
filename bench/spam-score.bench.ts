/**
 * SpamAssassin scores of each kind of mail: campaign, test copy, welcome, confirmation, magic link.
 * Starts the built server (or BENCH_BASELINE_DIST's build beside it) with its e-mail worker writing to the
 * outbox, makes it send one of each, and scores every `.eml` with `spamassassin -L -t` (offline: no
 * network tests). SpamAssassin is the Debian package (`apt-get install -y spamassassin`), not a dependency
 * of the project; this is a measurement, not a test.
 *
 *   npm run bench -- spam-score
 *   BENCH_BASELINE_DIST=<other checkout>/dist npm run bench -- spam-score     (adds a "before" column)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { type BenchServer, call, PROJECT_ROOT, startServer } from './http-bench';

const ORIGIN = 'https://www.lumen-bench.example.com';
const DOMAIN = 'lumen-bench.example.com';
const KINDS = ['campaign', 'test copy', 'welcome', 'confirmation', 'magic link'] as const;
type Kind = (typeof KINDS)[number];
const SUBJECT = 'The November letter';
const HTML =
  '<h1>Hello {{firstName}}</h1><p>The club meets on Thursday at seven. This month we read a novel set ' +
  'by the sea, and the library has ten copies to lend.</p><p><a href="https://www.lumen-bench.example.com/' +
  'events/november">See the programme</a></p><p>See you there,<br>The Lumen Club</p>';

/** Sends one mail of each kind through a server; its outbox directory. */
async function sendEachKind(server: BenchServer): Promise<void> {
  const admin = server.admin;
  const app = async (id: string, features: Record<string, unknown>) => {
    const created = await call(server.baseUrl, 'POST', '/admin/apps', admin, {
      id,
      name: id === 'lumen' ? 'Lumen Club' : 'Atlas Readers',
      allowedOrigins: [ORIGIN],
      features,
    });
    return String((created.data as Record<string, unknown>).publicKey);
  };
  const lumenKey = await app('lumen', { doubleOptIn: true });
  const atlasKey = await app('atlas', { magicLinkUrl: `${ORIGIN}/sign-in` });
  const join = (key: string, email: string, client: string) =>
    call(
      server.baseUrl,
      'POST',
      '/joinlist',
      { 'x-app-key': key, origin: ORIGIN, 'x-forwarded-for': client },
      {
        email,
        firstName: 'Ada',
      },
    );
  await join(lumenKey, 'confirm@example.net', '10.9.0.1');
  await join(atlasKey, 'reader@example.net', '10.9.0.2');
  await call(
    server.baseUrl,
    'POST',
    '/auth/magic-link',
    { 'x-forwarded-for': '10.9.0.3' },
    {
      email: 'magic@example.net',
      appId: 'atlas',
    },
  );
  const base = '/admin/atlas/newsletter/campaigns';
  const draft = await call(server.baseUrl, 'POST', base, admin, {
    name: 'November',
    subject: SUBJECT,
    htmlContent: HTML,
  });
  const id = String((draft.data as Record<string, unknown>)._id);
  await call(server.baseUrl, 'POST', `${base}/${id}/test`, admin, { email: 'qa@example.net' });
  await call(server.baseUrl, 'POST', `${base}/${id}/send`, admin, {});
}

/** The kind of a message written to the outbox, by its recipient and subject. */
function kindOf(eml: string): Kind | null {
  const to = /^To: (.*)$/im.exec(eml)?.[1] ?? '';
  const subject = /^Subject: (.*)$/im.exec(eml)?.[1] ?? '';
  if (subject.startsWith('[Test]')) return 'test copy';
  if (subject.includes(SUBJECT)) return 'campaign';
  if (to.includes('confirm@')) return 'confirmation';
  if (to.includes('magic@')) return 'magic link';
  if (to.includes('reader@')) return 'welcome';
  return null;
}

/** SpamAssassin's score and the rules that hit, offline. */
function spamScore(file: string): { score: number; rules: string } {
  const result = spawnSync('spamassassin', ['-L', '-t'], { input: readFileSync(file), maxBuffer: 16 << 20 });
  const out = result.stdout.toString('utf8');
  const score = Number(/^X-Spam-Status: \w+, score=(-?[\d.]+)/m.exec(out)?.[1] ?? NaN);
  const tests = /^X-Spam-Status:[^\n]*tests=([\s\S]*?)\s+autolearn/m.exec(out)?.[1] ?? '';
  return { score, rules: tests.replace(/\s+/g, '') };
}

/** Scores of one build: starts it, sends, waits for five files, scores them. */
async function scoresOf(
  dist: string,
  mongoUri: string,
): Promise<Map<Kind, { score: number; rules: string }>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'spam-score-'));
  const server = await startServer(dist, mongoUri, [], {
    DATA_DIR: dataDir,
    EMAIL_WORKER_ENABLED: 'true',
    EMAIL_TRANSPORT: 'outbox',
    MAIL_FROM: `"Lumen Club" <news@${DOMAIN}>`,
    PUBLIC_BASE_URL: `https://mail.${DOMAIN}`,
  });
  try {
    await sendEachKind(server);
    const outbox = join(dataDir, 'outbox');
    const deadline = Date.now() + 120_000;
    const found = new Map<Kind, string>();
    while (found.size < KINDS.length && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 500));
      let files: string[] = [];
      try {
        files = readdirSync(outbox).filter((file) => file.endsWith('.eml'));
      } catch {
        continue;
      }
      for (const file of files) {
        const kind = kindOf(readFileSync(join(outbox, file), 'utf8'));
        if (kind && !found.has(kind)) found.set(kind, join(outbox, file));
      }
    }
    const scores = new Map<Kind, { score: number; rules: string }>();
    for (const [kind, file] of found) scores.set(kind, spamScore(file));
    return scores;
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const version = spawnSync('spamassassin', ['-V']).stdout?.toString().split('\n')[0];
  if (!version) throw new Error('spamassassin is not installed (apt-get install -y spamassassin)');
  const database = await startDevDatabase();
  try {
    const after = await scoresOf(join(PROJECT_ROOT, 'dist'), withDatabaseName(database.uri, 'bench_spam'));
    const before = process.env.BENCH_BASELINE_DIST
      ? await scoresOf(
          resolve(process.env.BENCH_BASELINE_DIST),
          withDatabaseName(database.uri, 'bench_spam_before'),
        )
      : undefined;
    console.log(`${version}, offline (-L)\n`);
    console.log(`| kind | ${before ? 'before | ' : ''}after | rules hit (after) |`);
    console.log(`| --- | ${before ? '--- | ' : ''}--- | --- |`);
    for (const kind of KINDS) {
      const now = after.get(kind);
      const then = before?.get(kind);
      const cell = (value?: { score: number }) => (value ? value.score.toFixed(1) : 'not sent');
      console.log(`| ${kind} | ${before ? `${cell(then)} | ` : ''}${cell(now)} | ${now?.rules ?? ''} |`);
    }
    if (before) {
      console.log('\nrules hit (before):');
      for (const kind of KINDS) console.log(`  ${kind}: ${before.get(kind)?.rules ?? ''}`);
    }
  } finally {
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
