import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { ChatDeliveryWorker } from '../src/chat/delivery/chat-delivery.worker';
import { shortReason } from '../src/common/logging/access-log';
import { loggerParams } from '../src/common/logging/log-stream';
import { EMAIL_WORKER_OPTIONS, type EmailWorkerOptions } from '../src/email/jobs/worker-options';
import { CampaignProgress } from '../src/newsletter/campaigns/campaign-progress';
import { freePort, startApi, type ApiProcess } from './helpers/api-process';
import { createTestApp, type TestApp } from './helpers/app';
import { waitForNotifications } from './helpers/chat';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSessions, type Session } from './helpers/session';
import { startSmtpServer, type TestSmtpServer } from './helpers/smtp';
import { compileWorker, killAll, type CompiledWorker, COMPILE_HOOK_MS } from './helpers/worker-process';
import { SAFETY_DEADLINE_MS, waitFor } from './helpers/wait';

interface LogLine {
  level: number;
  msg: string;
  context?: string;
  route?: string;
  status?: number;
  reason?: string;
}

interface Boot {
  code: number | null;
  /** Non-empty stdout lines (the JSON log), parsed. */
  lines: LogLine[];
  output: string;
}

const NODE_MODULES = resolve(__dirname, '..', 'node_modules');

/**
 * How to start a process that file modes apply to. Root may write anywhere, so as root the server runs
 * without root's privileges: setpriv empties its capability sets and the kernel then checks file modes for it
 * as for any user. It stays uid 0, so it still reaches the project wherever that lives (another user, such as
 * nobody, cannot enter a checkout under a directory only root may enter). `skipped` says why it cannot be
 * done.
 */
function unprivileged(): { prefix: string[]; skipped?: string } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const prefix = ['setpriv', '--bounding-set=-all', '--inh-caps=-all'];
  const probe = spawnSync(
    prefix[0],
    [
      ...prefix.slice(1),
      process.execPath,
      '-e',
      'require("node:fs").accessSync(process.argv[1], 5)',
      NODE_MODULES,
    ],
    { encoding: 'utf8' },
  );
  if (probe.error) return { prefix, skipped: `root cannot drop its privileges (${probe.error.message})` };
  if (probe.status === 0) return { prefix };
  const cause = probe.stderr.split('\n').find((line) => /Error|setpriv/.test(line)) ?? `exit ${probe.status}`;
  return {
    prefix,
    skipped: `root without its privileges cannot run node on ${NODE_MODULES}: ${cause.trim()}`,
  };
}
const UNPRIVILEGED = unprivileged();

/**
 * The mistakes of a newcomer's first hour, as the built server reports them: each must end start-up with
 * one line that names the variable (PORT, DATA_DIR) or the cause, instead of a stack or three messages.
 */
describe('Start-up errors a newcomer can act on', () => {
  let build: CompiledWorker;
  const dirs: string[] = [];
  const running: ApiProcess[] = [];

  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'newcomer-errors-'));
    dirs.push(dir);
    return dir;
  };

  // tsc may take minutes on a loaded machine when no other test file has compiled these sources yet.
  beforeAll(async () => {
    // A copy of the shared build beside a link to the project's dev database launcher, which the build
    // finds in a tools/mongo-dev-server above it (dev-database.ts); the global setup has made its Maven
    // build. The shared build is left as it is: a link there would name this checkout for every later run.
    const shared = await compileWorker();
    const root = tempDir();
    const dir = join(root, 'build');
    cpSync(shared.dir, dir, { recursive: true });
    mkdirSync(join(root, 'tools'));
    symlinkSync(
      resolve(__dirname, '..', 'tools', 'mongo-dev-server'),
      join(root, 'tools', 'mongo-dev-server'),
    );
    const moved = (file: string) => join(dir, relative(shared.dir, file));
    build = { dir, mainJs: moved(shared.mainJs), workerJs: moved(shared.workerJs) };
  }, COMPILE_HOOK_MS);
  afterAll(async () => {
    await killAll(running);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** `node main.js` as `npm start` runs it outside production: the embedded dev database, unless told. */
  async function boot(env: Record<string, string>, prefix: string[] = []): Promise<Boot> {
    const [command, ...args] = [...prefix, process.execPath, build.mainJs];
    const child = spawn(command, args, {
      cwd: build.dir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_PATH: NODE_MODULES,
        NODE_ENV: 'development',
        LOG_FORMAT: 'json',
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        APP_SECRET: process.env.APP_SECRET!,
        EMAIL_WORKER_ENABLED: 'false',
        CHAT_WORKER_ENABLED: 'false',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), SAFETY_DEADLINE_MS);
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    clearTimeout(killer);
    const lines = stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
    return { code, lines, output: stdout + stderr };
  }

  /** The lines at error level or above: the newcomer's whole explanation. */
  const failures = (result: Boot) => result.lines.filter((line) => line.level >= 50);

  it('a port in use: one line naming PORT, before the dev database starts, never "successfully started"', async () => {
    const holder: Server = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const port = (holder.address() as { port: number }).port;
    try {
      const result = await boot({ PORT: String(port), DATA_DIR: tempDir() });
      expect(result.code).toBe(1);
      expect(result.lines).toHaveLength(1);
      expect(result.lines[0]).toMatchObject({ level: 60 });
      expect(result.lines[0].msg).toMatch(new RegExp(`^PORT=${port} is already in use on 127\\.0\\.0\\.1`));
      expect(result.output).not.toMatch(/successfully started|EADDRINUSE|DevDatabase/);
    } finally {
      holder.close();
    }
  });

  it('a second instance on the same DATA_DIR: one line naming DATA_DIR, no Java stack', async () => {
    const dataDir = tempDir();
    // An empty MONGODB_URI is unset: the embedded dev database, its file in DATA_DIR.
    const env = {
      MONGODB_URI: '',
      SMTP_URL: '',
      NODE_ENV: 'development',
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: dataDir,
      EMAIL_WORKER_ENABLED: 'false',
      CHAT_WORKER_ENABLED: 'false',
    };
    // The first instance holds the dev database file in DATA_DIR.
    running.push(await startApi(build, 'first', env, 90_000));

    const result = await boot({ DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(failures(result)).toEqual([
      expect.objectContaining({
        level: 60,
        msg: expect.stringMatching(new RegExp(`^Another instance is using DATA_DIR=${dataDir} `)),
      }),
    ]);
    expect(result.output).not.toMatch(/MVStoreException|at org\.h2|ExceptionHandler/);
  }, 150_000);

  /** Jest lists a skipped test by its name: the reason goes there. */
  const unprivilegedIt = UNPRIVILEGED.skipped === undefined ? it : it.skip;
  const skipNote = UNPRIVILEGED.skipped === undefined ? '' : ` (skipped: ${UNPRIVILEGED.skipped})`;

  unprivilegedIt(
    `a DATA_DIR this user may not write: one line naming DATA_DIR and EACCES${skipNote}`,
    async () => {
      const readOnly = join(tempDir(), 'read-only');
      mkdirSync(readOnly, { mode: 0o555 });
      chmodSync(readOnly, 0o555);
      const dataDir = join(readOnly, 'data');
      const result = await boot({ DATA_DIR: dataDir }, UNPRIVILEGED.prefix);
      expect(result.code).toBe(1);
      expect(result.lines).toHaveLength(1);
      expect(result.lines[0].msg).toBe(
        `Invalid configuration: DATA_DIR: cannot create or write ${dataDir}: this user may not write into ` +
          `${readOnly} (EACCES); set DATA_DIR to a directory this user can write`,
      );
    },
    60_000,
  );

  it('a DATA_DIR below a file: one line naming DATA_DIR', async () => {
    const file = join(tempDir(), 'not-a-directory');
    writeFileSync(file, '');
    const result = await boot({ DATA_DIR: join(file, 'data') });
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0].msg).toMatch(/^Invalid configuration: DATA_DIR: cannot create or write .*ENOTDIR/);
  });

  /** The one line of a start that ends at once: its message. */
  async function oneLine(env: Record<string, string>): Promise<string> {
    const result = await boot({ DATA_DIR: tempDir(), ...env });
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(1);
    return result.lines[0].msg;
  }

  it('a HOST that does not resolve: one line naming HOST', async () => {
    expect(await oneLine({ HOST: 'locahost' })).toBe(
      'HOST=locahost is not a name this machine can resolve (ENOTFOUND): use 0.0.0.0, 127.0.0.1 or localhost',
    );
  });

  it.each([
    ['/sys/admin-service', '/sys', 'sysfs'],
    ['/proc/admin-service', '/proc', 'procfs'],
  ])(
    'DATA_DIR=%s: one line naming DATA_DIR, no hang',
    async (dataDir, root, kind) => {
      expect(await oneLine({ DATA_DIR: dataDir })).toBe(
        `Invalid configuration: DATA_DIR: cannot create or write ${dataDir}: ${root} is on a kernel file ` +
          `system (${kind}) that holds no data; set DATA_DIR to a directory this user can write`,
      );
    },
    60_000,
  );

  it('a MONGODB_URI without a database name in development: one line naming MONGODB_URI', async () => {
    expect(await oneLine({ MONGODB_URI: 'mongodb://127.0.0.1:1' })).toMatch(
      /^Invalid configuration: MONGODB_URI: names no database \(127\.0\.0\.1:1\), so the driver would write/,
    );
  });

  it('production without SMTP_URL: one line naming SMTP_URL and EMAIL_TRANSPORT=outbox', async () => {
    const production = {
      NODE_ENV: 'production',
      MONGODB_URI: 'mongodb://127.0.0.1:1/admin-service',
      BCRYPT_COST: '10',
      MAIL_FROM: 'News <news@mail.example.com>',
      PUBLIC_BASE_URL: 'https://mail.example.com',
    };
    expect(await oneLine(production)).toMatch(
      /^Invalid configuration: SMTP_URL: is required when NODE_ENV=production .*EMAIL_TRANSPORT=outbox/,
    );
  });

  it('a start nobody can sign in to says how to create the first admin, once', async () => {
    const env = {
      MONGODB_URI: '',
      SMTP_URL: '',
      NODE_ENV: 'development',
      APP_SECRET: process.env.APP_SECRET!,
      DATA_DIR: tempDir(),
      LOG_FORMAT: 'json',
      EMAIL_WORKER_ENABLED: 'false',
      CHAT_WORKER_ENABLED: 'false',
    };
    const noAdmin = (api: ApiProcess) =>
      api
        .output()
        .split('\n')
        .filter((line) => line.includes('No admin can sign in'));
    const first = await startApi(build, 'no-admin', { ...env, ADMIN_EMAIL: 'owner@example.com' }, 90_000);
    running.push(first);
    expect(noAdmin(first)).toHaveLength(1);
    expect(noAdmin(first)[0]).toContain(
      'No admin can sign in (ADMIN_EMAIL is set without ADMIN_PASSWORD): to create the first admin, set ' +
        'ADMIN_EMAIL and ADMIN_PASSWORD and start again',
    );
    await killAll([first]);
    // Once an admin exists, a start without the settings is an ordinary one.
    const second = await startApi(
      build,
      'with-admin',
      { ...env, ADMIN_EMAIL: 'owner@example.com', ADMIN_PASSWORD: 'first-start-password' },
      90_000,
    );
    running.push(second);
    await killAll([second]);
    const third = await startApi(build, 'admin-exists', env, 90_000);
    running.push(third);
    expect(noAdmin(third)).toEqual([]);
  }, 300_000);

  it('a bad value: one message per variable', async () => {
    const one = await boot({ PORT: 'abc', DATA_DIR: tempDir() });
    expect(one.code).toBe(1);
    expect(one.lines.map((line) => line.msg)).toEqual([
      'Invalid configuration: PORT: must be an integer number',
    ]);

    const two = await boot({ PORT: 'abc', BCRYPT_COST: 'high', DATA_DIR: tempDir() });
    expect(two.lines.map((line) => line.msg)).toEqual([
      'Invalid configuration:\n  PORT: must be an integer number\n  BCRYPT_COST: must be an integer number',
    ]);
  });
});

const WORKER_OPTIONS: EmailWorkerOptions = {
  concurrency: 10,
  ratePerSecond: 0,
  leaseMs: 60_000,
  scanSize: 100,
  rescanAfterMs: 2_000,
  finishBatchSize: 50,
  backoff: { baseMs: 100, maxMs: 2_000 },
};

/** What the running service tells an operator: why a request was refused, chat fallbacks, campaigns done. */
describe('Log lines a newcomer can act on', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let admin: Session;
  const raw: string[] = [];
  const lines = () => raw.map((line) => JSON.parse(line) as LogLine);
  const accessLines = () => lines().filter((line) => line.msg === 'request completed');

  beforeAll(async () => {
    delete process.env.CHAT_DEFAULT_WEBHOOK_URL;
    smtp = await startSmtpServer();
    process.env.SMTP_URL = smtp.url;
    const sink = { write: (line: string) => void raw.push(line) };
    t = await createTestApp({
      overrides: [
        { provide: PARAMS_PROVIDER_TOKEN, useValue: loggerParams('info', 'json', sink) },
        { provide: EMAIL_WORKER_OPTIONS, useValue: WORKER_OPTIONS },
      ],
    });
    await t.app.listen(0, '127.0.0.1');
    ({ admin } = await createSessions(t));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });
  beforeEach(() => raw.splice(0));

  /** The access line is written once the answer is sent, so it may follow the response by a moment. */
  async function accessLine(): Promise<LogLine> {
    await waitFor(() => accessLines().length > 0, { intervalMs: 10, describe: () => 'no access line' });
    expect(accessLines()).toHaveLength(1);
    return accessLines()[0];
  }

  it('a 4xx access line carries the short reason of the answer, without the values sent', async () => {
    const res = await t.http.post('/auth/login', {
      email: 'augusta.king-lovelace',
      password: 'hunter2-secret-password',
    });
    expect(res.status).toBe(400);
    const line = await accessLine();
    // The example address of the message is taken out like any other.
    expect(line).toMatchObject({ route: '/auth/login', status: 400, reason: shortReason(res.body.error) });
    expect(line.reason).toMatch(/^email must be an email address such as \[address\]/);
    expect(raw.join('\n')).not.toMatch(/augusta|hunter2/);
  });

  it('a refused login says why; a 2xx and an unknown route carry no reason', async () => {
    await t.http.post('/auth/login', { email: 'nobody@example.com', password: 'wrong-password' });
    expect((await accessLine()).reason).toEqual(expect.any(String));
    expect(raw.join('\n')).not.toContain('nobody@example.com');

    raw.splice(0);
    await t.http.get('/health/live');
    expect((await accessLine()).reason).toBeUndefined();

    raw.splice(0);
    await t.http.get('/no/such/route?token=private-query');
    const unknown = await accessLine();
    expect(unknown.status).toBe(404);
    expect(unknown.reason).toBeUndefined();
    expect(raw.join('\n')).not.toContain('private-query');
  });

  it('takes addresses, URLs, client file names and control characters out of a reason', () => {
    expect(shortReason('files: Jane Doe passport.png is empty')).toBe('files: [file] is empty');
    expect(shortReason('webhookUrl is refused: https://hooks.example/T0/secret-path')).toBe(
      'webhookUrl is refused: [url]',
    );
    expect(shortReason('A record for jane@example.com\nexists')).toBe('A record for [address] exists');
    expect(shortReason('x'.repeat(500))).toHaveLength(161);
  });

  it('a chat notification without a webhook is one line, naming ids', async () => {
    const app = await seedApp(t);
    const ticket = await admin.http.post(`/${app.id}/tickets`, {
      email: 'ada@example.com',
      subject: 'Help',
      message: 'Please',
    });
    expect(ticket.status).toBe(201);
    await waitForNotifications(t, 1, { appId: app.id });
    raw.splice(0);
    await t.app.get(ChatDeliveryWorker).processDue();
    const fallback = raw.filter((line) => line.includes('no webhook configured'));
    expect(fallback).toHaveLength(1);
    const { msg } = JSON.parse(fallback[0]) as LogLine;
    expect(msg).not.toContain('\n');
    expect(msg).toMatch(new RegExp(`of app ${app.id}: tickets ticket\\.created \\(ticketId=`));
  });

  it('a finished campaign is logged once with its counts', async () => {
    const app = await seedApp(t);
    for (const email of ['one@example.com', 'two@example.com', 'three@example.com']) {
      const res = await admin.http.post(`/admin/${app.id}/newsletter/subscribers`, { email });
      expect(res.status).toBe(201);
    }
    const created = await admin.http.post(`/admin/${app.id}/newsletter/campaigns`, {
      name: 'Launch',
      subject: 'News',
      htmlContent: '<p>News</p>',
    });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    expect((await admin.http.post(`/admin/${app.id}/newsletter/campaigns/${id}/send`)).status).toBe(200);
    await drainEmailQueue(t);
    const progress = t.app.get(CampaignProgress);
    await progress.flush();
    // More recounts (a sweep, another process) find it finished and say nothing more.
    await progress.recount(id);
    await progress.sweep();
    const finished = lines().filter((line) => line.msg.startsWith(`Campaign ${id} `));
    expect(finished.map((line) => line.msg)).toEqual([
      `Campaign ${id} of app ${app.id} finished (sent): 3 message(s), 3 sent, 0 failed, 0 skipped ` +
        '(suppressed or refused address)',
    ]);
  });
});
