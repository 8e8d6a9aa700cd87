/**
 * Fuzzing with schemathesis (`npm run fuzz:ci`, bounded for CI; `npm run fuzz`, deeper): every operation
 * of /docs-json, all checks and all phases (examples, coverage, fuzzing, stateful), against the built server
 * with the embedded dev database, as the start-up admin (bearer) with an API key of a seeded app.
 *
 * schemathesis (tools/fuzz/requirements.txt) lives in .venv-fuzz/, created on first use with FUZZ_PYTHON
 * (default python3). Credentials go per security scheme (schemathesis.toml); hooks.py keeps the fuzzer off
 * its own admin, key and app, and spreads requests over client addresses. Reports go to artifacts/fuzz/:
 * summary.md (failures grouped by kind, with example requests), junit.xml, schemathesis.log (its console
 * output) and server.log, where each 500's errorId can be looked up. Exits non-zero when the run did not
 * finish, or on a server error, a response that breaks the document or an undocumented status code; the other
 * checks are reported in summary.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ARTIFACTS_DIR,
  type BuiltServer,
  callJson,
  loginAdmin,
  PROJECT_ROOT,
  startBuiltServer,
} from '../shared/built-server';
import { summarize } from './summary';

const VENV = join(PROJECT_ROOT, '.venv-fuzz');
const REQUIREMENTS = join(PROJECT_ROOT, 'tools', 'fuzz', 'requirements.txt');
const HOOKS = join(PROJECT_ROOT, 'tools', 'fuzz', 'hooks.py');
const CONFIG = join(PROJECT_ROOT, 'tools', 'fuzz', 'schemathesis.toml');
const REPORT_DIR = join(ARTIFACTS_DIR, 'fuzz');
const CONSOLE_LOG = join(REPORT_DIR, 'schemathesis.log');
const JUNIT = join(REPORT_DIR, 'junit.xml');
const APP_ID = 'fuzz-app';

interface Profile {
  /** Arguments that bound the run. */
  bounds: string[];
  /** Kills schemathesis if it overruns its own budget (a hung request, a stuck shrink). */
  hardLimitMs: number;
}

const PROFILES: Record<string, Profile> = {
  // ≤ 5 minutes with build and start-up on the 2-core machine: few examples per operation, and a time budget
  // that stops the repeated fuzzing and stateful phases.
  ci: { bounds: ['--max-examples', '15', '--max-time', '150'], hardLimitMs: 210_000 },
  // Deeper: schemathesis's default examples per operation, and up to 20 minutes.
  deep: { bounds: ['--max-examples', '100', '--max-time', '1200'], hardLimitMs: 1_320_000 },
};

/** The interpreter the virtualenv is made with (FUZZ_PYTHON, default python3). */
const PYTHON = process.env.FUZZ_PYTHON ?? 'python3';

/** Creates .venv-fuzz/ with the pinned schemathesis, again when requirements.txt or FUZZ_PYTHON changed. */
function ensureVenv(): string {
  const wanted = createHash('sha256').update(readFileSync(REQUIREMENTS)).update(PYTHON).digest('hex');
  const stamp = join(VENV, '.requirements.sha256');
  const bin = join(VENV, 'bin', 'schemathesis');
  if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return bin;
  console.log(`Installing schemathesis into .venv-fuzz/ (${PYTHON})`);
  rmSync(VENV, { recursive: true, force: true });
  for (const [command, args] of [
    [PYTHON, ['-m', 'venv', VENV]],
    [join(VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS]],
  ] as const) {
    const result = spawnSync(command, args, { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
  }
  writeFileSync(stamp, wanted);
  return bin;
}

interface Credentials {
  token: string;
  apiKey: string;
  /** Concrete paths of the admin, the key and its app, which the fuzzer must not write to (hooks.py). */
  protectedPaths: string[];
}

/** The admin's token and an API key of a fresh app, so KEY routes are reachable too. */
async function seed(server: BuiltServer): Promise<Credentials> {
  const token = await loginAdmin(server.baseUrl);
  const bearer = { authorization: `Bearer ${token}` };
  const me = await callJson(server.baseUrl, 'GET', '/auth/me', bearer);
  const adminId = (me.user as { id?: unknown } | undefined)?.id;
  await callJson(server.baseUrl, 'POST', '/admin/apps', bearer, { id: APP_ID, name: 'Fuzz app' });
  const created = await callJson(server.baseUrl, 'POST', '/api-keys', bearer, {
    appId: APP_ID,
    name: 'Fuzz key',
  });
  const key = created.data as { key?: unknown; _id?: unknown } | undefined;
  if (typeof adminId !== 'string' || typeof key?.key !== 'string' || typeof key._id !== 'string') {
    throw new Error(`seeding: unexpected answers ${JSON.stringify(me)} / ${JSON.stringify(created)}`);
  }
  return {
    token,
    apiKey: key.key,
    // Also the routes that act on the caller's own session: signing out ends the fuzzer's token, and
    // enabling two-factor sign-in ends it too (and would ask every later login for a code).
    protectedPaths: [
      `/users/${adminId}`,
      `/api-keys/${key._id}`,
      `/admin/apps/${APP_ID}`,
      '/auth/logout',
      '/auth/2fa/enable',
    ],
  };
}

function runSchemathesis(
  bin: string,
  args: string[],
  credentials: Credentials,
  hardLimitMs: number,
): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, {
      // The hypothesis example database (.hypothesis/) lands beside the reports.
      cwd: REPORT_DIR,
      // Through the environment, not the command line: `ps` shows arguments to every user of the machine.
      env: {
        ...process.env,
        SCHEMATHESIS_HOOKS: HOOKS,
        FUZZ_BEARER_TOKEN: credentials.token,
        FUZZ_API_KEY: credentials.apiKey,
        FUZZ_PROTECTED_PATHS: JSON.stringify(credentials.protectedPaths),
        FUZZ_APP_ID: APP_ID,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // On the console as it runs, and in a file the summary reads its figures from.
    const log = createWriteStream(CONSOLE_LOG);
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        process.stdout.write(chunk);
        log.write(chunk);
      });
    }
    const killer = setTimeout(() => {
      console.error(`schemathesis exceeded ${hardLimitMs / 1000} s; stopping it`);
      child.kill('SIGTERM');
    }, hardLimitMs);
    child.on('error', fail);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      log.end(() => done(code ?? (signal ? 1 : 0)));
    });
  });
}

async function main(): Promise<void> {
  const profileName = process.argv[2] ?? 'ci';
  const profile = PROFILES[profileName];
  if (!profile) throw new Error(`unknown profile ${profileName} (${Object.keys(PROFILES).join(', ')})`);
  const started = Date.now();
  const bin = ensureVenv();
  rmSync(REPORT_DIR, { recursive: true, force: true });
  mkdirSync(REPORT_DIR, { recursive: true });

  const server = await startBuiltServer({
    logFile: join(REPORT_DIR, 'server.log'),
    env: {
      // Each fuzz request names its own client address (tools/fuzz/hooks.py), so the per-IP rate limits
      // do not turn the run into 429s.
      TRUST_PROXY: 'loopback',
      // The fuzzer creates users by the hundred; production's cost 12 would make that the bottleneck.
      BCRYPT_COST: '4',
    },
  });
  let status: number;
  try {
    const credentials = await seed(server);
    const args = [
      '--config-file',
      CONFIG,
      'run',
      `${server.baseUrl}/docs-json`,
      '--checks',
      'all',
      '--phases',
      'examples,coverage,fuzzing,stateful',
      // One worker: on this 2-core machine the server and its database are the bottleneck (a second worker
      // gave no more cases), and CPython before 3.11.8 / 3.12.2 now and then fails with "AST constructor
      // recursion depth mismatch" when two threads parse at once (hypothesis does): a tool error, not a
      // finding.
      '--workers',
      '1',
      '--request-timeout',
      '10',
      ...profile.bounds,
      '--report',
      'junit',
      '--report-junit-path',
      JUNIT,
      '--no-color',
    ];
    console.log(`schemathesis (${profileName}) against ${server.baseUrl}/docs-json`);
    status = await runSchemathesis(bin, args, credentials, profile.hardLimitMs);
  } finally {
    await server.stop();
  }
  const summaryFile = join(REPORT_DIR, 'summary.md');
  const summary = summarize(
    CONSOLE_LOG,
    JUNIT,
    `schemathesis ${profileName} run, ${new Date(started).toISOString()}`,
  );
  writeFileSync(summaryFile, summary.markdown);
  console.log(summary.headline);
  console.log(
    `fuzz (${profileName}) took ${((Date.now() - started) / 1000).toFixed(0)} s; summary: ${summaryFile}`,
  );
  // schemathesis exits 1 for any failing check; the gate is the three kinds of summary.gatingFailures.
  const passed = summary.completed && summary.gatingFailures === 0;
  if (!summary.completed) console.error(`fuzz: schemathesis did not finish (exit ${status})`);
  process.exitCode = passed ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(`fuzz: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
