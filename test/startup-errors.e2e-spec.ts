import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './helpers/api-process';
import { compileWorker, type CompiledWorker, COMPILE_HOOK_MS } from './helpers/worker-process';

interface Boot {
  code: number | null;
  /** Non-empty stdout lines (the JSON log). */
  lines: string[];
  stderr: string;
  elapsedMs: number;
}

/**
 * How an operator's first mistakes with the database end: the built server started as in production, its
 * output read whole. Each must end the process quickly with one line that names MONGODB_URI.
 */
describe('Start-up errors about the database', () => {
  let build: CompiledWorker;
  const dataDirs: string[] = [];

  beforeAll(async () => {
    build = await compileWorker();
  }, COMPILE_HOOK_MS);
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  async function boot(env: Record<string, string>): Promise<Boot> {
    const dataDir = mkdtempSync(join(tmpdir(), 'startup-errors-'));
    dataDirs.push(dataDir);
    const startedAt = Date.now();
    const child = spawn(process.execPath, [build.mainJs], {
      cwd: build.dir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_PATH: resolve(__dirname, '..', 'node_modules'),
        NODE_ENV: 'production',
        MAIL_FROM: 'news@mail.example.com',
        PUBLIC_BASE_URL: 'https://mail.example.com',
        LOG_FORMAT: 'json',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        APP_SECRET: process.env.APP_SECRET!,
        DATA_DIR: dataDir,
        EMAIL_TRANSPORT: 'outbox',
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
    // A server that starts after all (today's stand-in) is stopped by the test's bound, not left running.
    const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    clearTimeout(killer);
    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    return { code, lines, stderr, elapsedMs: Date.now() - startedAt };
  }

  const fatal = (line: string) => JSON.parse(line) as { level: number; msg: string };

  it('refuses production without MONGODB_URI in one line, before starting the embedded stand-in', async () => {
    const result = await boot({});
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(1);
    expect(fatal(result.lines[0])).toMatchObject({
      level: 60,
      msg: expect.stringContaining('MONGODB_URI: is required when NODE_ENV=production'),
    });
    expect(result.stderr).toBe('');
  });

  it('refuses a production URI that names no database in one line', async () => {
    const result = await boot({ MONGODB_URI: 'mongodb://127.0.0.1:1' });
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(1);
    expect(fatal(result.lines[0]).msg).toContain('MONGODB_URI: names no database (127.0.0.1:1)');
  });

  it('gives up at once on a refused connection: one line with MONGODB_URI and the host, no password', async () => {
    const result = await boot({
      MONGODB_URI: 'mongodb://operator:hunter2-secret@127.0.0.1:1/admin-service',
      // Far beyond the test's own bound: only the refusal can end start-up in time.
      MONGODB_STARTUP_TIMEOUT_MS: '300000',
    });
    expect(result.code).toBe(1);
    expect(result.lines).toHaveLength(1);
    const line = fatal(result.lines[0]);
    expect(line.level).toBe(60);
    expect(line.msg).toMatch(
      /^MONGODB_URI: cannot reach the database at 127\.0\.0\.1:1: it refused the connection \(.*ECONNREFUSED/,
    );
    expect(result.lines[0]).not.toContain('hunter2-secret');
    expect(result.stderr).toBe('');
  });

  it('gives up on a database that never answers within its start-up timeout, in one line', async () => {
    // Accepts connections and says nothing: the driver's first check waits for a reply that never comes.
    const silent = createServer(() => undefined);
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const { port } = silent.address() as AddressInfo;
    try {
      const result = await boot({
        MONGODB_URI: `mongodb://127.0.0.1:${port}/admin-service`,
        MONGODB_STARTUP_TIMEOUT_MS: '2000',
      });
      expect(result.code).toBe(1);
      expect(result.lines).toHaveLength(1);
      expect(fatal(result.lines[0]).msg).toMatch(
        new RegExp(
          `^MONGODB_URI: cannot reach the database at 127\\.0\\.0\\.1:${port}: it did not answer within 2 s`,
        ),
      );
      expect(result.stderr).toBe('');
    } finally {
      silent.close();
    }
  });
});
