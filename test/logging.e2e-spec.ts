import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { loggerParams } from '../src/common/logging/log-stream';
import { resolveLogFormat } from '../src/common/logging/log-format';
import { freePort } from './helpers/api-process';
import { createTestApp, type TestApp } from './helpers/app';
import { compileWorker, type CompiledWorker, COMPILE_HOOK_MS } from './helpers/worker-process';
import { waitFor } from './helpers/wait';

interface LogLine {
  level: number;
  time: string;
  msg: string;
  reqId?: string;
  method?: string;
  route?: string;
  status?: number;
  ms?: number;
  client?: string;
  context?: string;
}

/** The production logger options at level info, written into memory (one JSON line per write). */
function memorySink(lines: { raw: string; line: LogLine }[]) {
  return { write: (raw: string) => void lines.push({ raw, line: JSON.parse(raw) as LogLine }) };
}

describe('Access log: one short line per request', () => {
  let t: TestApp;
  const lines: { raw: string; line: LogLine }[] = [];
  const accessLines = () => lines.filter(({ line }) => line.msg === 'request completed');

  beforeAll(async () => {
    t = await createTestApp({
      overrides: [
        { provide: PARAMS_PROVIDER_TOKEN, useValue: loggerParams('info', 'json', memorySink(lines)) },
      ],
    });
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(() => t.close());
  beforeEach(() => lines.splice(0));

  /** The access line is written once the answer is sent, so it may follow the response by a moment. */
  async function accessLine(): Promise<{ raw: string; line: LogLine }> {
    await waitFor(() => accessLines().length > 0, { intervalMs: 10, describe: () => 'no access line' });
    expect(accessLines()).toHaveLength(1);
    return accessLines()[0];
  }

  it('names the request id, method, route, status, duration and client, and nothing of the headers', async () => {
    const res = await t.http.get('/health', {
      headers: {
        'x-forwarded-for': '203.0.113.7',
        authorization: 'Bearer secret-token-value',
        cookie: 'a=b',
      },
    });
    const { raw, line } = await accessLine();
    expect(line).toMatchObject({
      level: 30,
      reqId: res.headers['x-request-id'],
      method: 'GET',
      route: '/health',
      status: 200,
      client: '203.0.113.7',
    });
    expect(typeof line.ms).toBe('number');
    expect(new Date(line.time).toISOString()).toBe(line.time);
    expect(raw).not.toMatch(/secret-token-value|cookie|user-agent|headers/i);
    expect(raw.length).toBeLessThan(300);
  });

  it('logs the route pattern, never the URL: link tokens and queries stay out of the log', async () => {
    await t.http.get('/unsubscribe/some.signed-token-value?utm=private-query');
    const { raw, line } = await accessLine();
    expect(line.route).toBe('/unsubscribe/:token');
    expect(raw).not.toMatch(/signed-token-value|private-query/);
  });

  it('logs an unknown route by its path without the query, cut short', async () => {
    await t.http.get(`/no/such/${'x'.repeat(400)}?token=private-query`);
    const { raw, line } = await accessLine();
    expect(line.status).toBe(404);
    expect(line.route).toMatch(/^\(unmatched\) \/no\/such\/x+…$/);
    expect(line.route!.length).toBeLessThan(230);
    expect(raw).not.toMatch(/private-query/);
  });

  it('writes a 4xx at info level', async () => {
    await t.http.get('/auth/me');
    const { line } = await accessLine();
    expect(line).toMatchObject({ status: 401, level: 30, route: '/auth/me' });
  });
});

describe('Log format', () => {
  it('is readable at a terminal outside production and JSON otherwise, unless LOG_FORMAT says', () => {
    expect(resolveLogFormat('auto', 'development', true)).toBe('pretty');
    expect(resolveLogFormat('auto', 'production', true)).toBe('json');
    expect(resolveLogFormat('auto', 'development', false)).toBe('json');
    expect(resolveLogFormat('json', 'development', true)).toBe('json');
    expect(resolveLogFormat('pretty', 'production', false)).toBe('pretty');
  });
});

/** The built server as an operator runs it, its stdout read line by line. */
describe('The server process log', () => {
  let build: CompiledWorker;
  const dataDirs: string[] = [];

  beforeAll(async () => {
    build = await compileWorker();
  }, COMPILE_HOOK_MS);
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  async function runServer(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'logging-process-'));
    dataDirs.push(dataDir);
    const child = spawn(process.execPath, [build.mainJs], {
      cwd: build.dir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_PATH: resolve(__dirname, '..', 'node_modules'),
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        PORT: String(port),
        HOST: '127.0.0.1',
        MONGODB_URI: process.env.MONGODB_URI!,
        APP_SECRET: process.env.APP_SECRET!,
        DATA_DIR: dataDir,
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
    let ended = false;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    void exited.then(() => (ended = true));
    await waitFor(() => stdout.includes('Listening on') || ended, {
      describe: () => `no "Listening on" line; stdout: ${stdout}; stderr: ${stderr}`,
    });
    expect(stdout).toContain('Listening on');
    const healthLines = () => stdout.split('/health').length - 1;
    const before = healthLines();
    await fetch(`http://127.0.0.1:${port}/health`);
    // The access line is written once the answer has gone out: wait for it, not for a while.
    await waitFor(() => healthLines() > before || ended, {
      describe: () => `no access line for /health; stdout: ${stdout}`,
    });
    child.kill('SIGTERM');
    await exited;
    return { stdout, stderr };
  }

  it('writes JSON lines without terminal escapes: a short start-up, the URLs, each request, the shutdown', async () => {
    const { stdout, stderr } = await runServer({ LOG_FORMAT: 'auto' });
    expect(stderr).toBe('');
    expect(stdout).not.toContain('\u001b[');
    const lines = stdout
      .trim()
      .split('\n')
      .map((raw) => JSON.parse(raw) as LogLine);
    const messages = lines.map((line) => line.msg);
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^Listening on http:\/\/127\.0\.0\.1:\d+; API docs at http:\/\/127\.0\.0\.1:\d+\/docs$/,
      ),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'request completed', route: '/health', status: 200 }),
    );
    expect(messages).toContain('Shutting down on SIGTERM: finishing requests and messages in flight');
    expect(messages).toContainEqual(expect.stringMatching(/^Stopped after \d+ ms$/));
    // Nest's line per module and per route are debug lines: the start-up an operator reads is short.
    expect(lines.filter((line) => line.context === 'RouterExplorer')).toEqual([]);
    expect(lines.length).toBeLessThan(20);
  });

  it('writes readable lines with LOG_FORMAT=pretty', async () => {
    const { stdout } = await runServer({ LOG_FORMAT: 'pretty' });
    expect(stdout).toMatch(/INFO: \[Main\] Listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/INFO: GET \/health 200 [\d.]+ ms/);
    // No terminal here: no colours either.
    expect(stdout).not.toContain('\u001b[');
  });

  it('reports a bad setting as one fatal line naming it', async () => {
    const child = spawn(process.execPath, [build.mainJs], {
      cwd: build.dir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_PATH: resolve(__dirname, '..', 'node_modules'),
        LOG_FORMAT: 'colour',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    const [line, ...rest] = stdout.trim().split('\n');
    expect(rest).toEqual([]);
    expect(JSON.parse(line)).toMatchObject({ level: 60, msg: expect.stringContaining('LOG_FORMAT') });
  });
});
