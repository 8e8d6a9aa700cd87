/**
 * Starts the built server (`dist/main.js`) the way an operator would, for the browser and fuzzing gates:
 * a free port on 127.0.0.1, a temporary DATA_DIR, the embedded dev database (MONGODB_URI unset) and an admin
 * from ADMIN_EMAIL / ADMIN_PASSWORD. Its output goes to a log file, where a 500's errorId can be looked up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** Compiled to .tools-build/tools/shared/: three levels below the project root. */
export const PROJECT_ROOT = resolve(__dirname, '..', '..', '..');
export const ARTIFACTS_DIR = join(PROJECT_ROOT, 'artifacts');

export const ADMIN = { email: 'gate-admin@example.com', password: 'gate-password-1' };

export interface BuiltServer {
  baseUrl: string;
  logFile: string;
  /** SIGTERM, wait for the exit (the dev database goes with it), remove DATA_DIR. */
  stop(): Promise<void>;
}

export interface StartOptions {
  logFile: string;
  /** Added to the server's environment. */
  env?: Record<string, string>;
  /** Start-up includes building the dev database launcher with Maven on a cold machine. */
  startTimeoutMs?: number;
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no free port')),
      );
    });
  });
}

export async function startBuiltServer(options: StartOptions): Promise<BuiltServer> {
  const port = await freePort();
  const workDir = mkdtempSync(join(tmpdir(), 'gate-server-'));
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: join(workDir, 'data'),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    NODE_ENV: 'development',
    ...options.env,
  };
  // The gates test the embedded set-up, never a database the caller's shell happens to point at.
  delete env.MONGODB_URI;
  delete env.APP_SECRET;
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist', 'main.js')], {
    // Not the project root: a developer's `.env` there must not leak into the run. The server finds the
    // dev database launcher relative to dist/ when the working directory has none.
    cwd: workDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));

  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    log.end();
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await waitForHealth(baseUrl, child, options.startTimeoutMs ?? 90_000, options.logFile);
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl, logFile: options.logFile, stop };
}

async function waitForHealth(
  baseUrl: string,
  child: ChildProcess,
  timeoutMs: number,
  logFile: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`server exited with code ${child.exitCode} during start-up (log: ${logFile})`);
    }
    try {
      if ((await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) })).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`server not healthy within ${timeoutMs / 1000} s (log: ${logFile})`);
}

/** A JSON call that must succeed; the error names the request and the answer. */
export async function callJson(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: object,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Signs in as the start-up admin; returns the bearer token. */
export async function loginAdmin(baseUrl: string): Promise<string> {
  const login = await callJson(baseUrl, 'POST', '/auth/login', {}, ADMIN);
  if (typeof login.token !== 'string')
    throw new Error(`POST /auth/login: no token in ${JSON.stringify(login)}`);
  return login.token;
}
