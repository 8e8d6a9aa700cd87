import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const PROJECT_ROOT = resolve(__dirname, '..', '..');

export interface CompiledWorker {
  /** The compiled `src/worker.ts`. */
  workerJs: string;
  dir: string;
  remove(): void;
}

/**
 * Compiles the service once with `tsconfig.build.json` into a temporary directory and returns the path of
 * the worker entry. tsconfig.build.json sets no rootDir, so tsc infers `src/` and writes `<dir>/worker.js`;
 * `<dir>/src/worker.js` is accepted too in case rootDir is set later. Type errors elsewhere in the tree still
 * emit JavaScript (no `noEmitOnError`), so only a missing worker.js fails.
 */
export async function compileWorker(): Promise<CompiledWorker> {
  const dir = mkdtempSync(join(tmpdir(), 'worker-process-build-'));
  const tsc = join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  let output = '';
  try {
    await promisify(execFile)(
      process.execPath,
      [tsc, '-p', 'tsconfig.build.json', '--outDir', dir, '--sourceMap', 'false'],
      { cwd: PROJECT_ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    output = `${failed.stdout ?? ''}${failed.stderr ?? ''}` || failed.message;
  }
  const workerJs = [join(dir, 'worker.js'), join(dir, 'src', 'worker.js')].find((file) => existsSync(file));
  if (!workerJs) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`tsc -p tsconfig.build.json emitted no worker.js:\n${output}`);
  }
  return { workerJs, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<WorkerExit>;
  /** Null while the process runs. */
  exit(): WorkerExit | null;
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL unless it has exited; resolves once it has. */
  kill(): Promise<WorkerExit>;
}

export interface WorkerEnv {
  MONGODB_URI: string;
  SMTP_URL: string;
  APP_SECRET: string;
  DATA_DIR: string;
  [name: string]: string;
}

/**
 * Runs `node <worker.js>` as a real OS process. The compiled code lives outside the project, so NODE_PATH
 * points at the project's node_modules; the working directory is the build directory, so no `.env` of the
 * project is read. Only the given variables (plus PATH) are passed on.
 */
export function startWorker(compiled: CompiledWorker, name: string, env: WorkerEnv): WorkerProcess {
  const child = spawn(process.execPath, [compiled.workerJs], {
    cwd: compiled.dir,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_PATH: join(PROJECT_ROOT, 'node_modules'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  let exit: WorkerExit | null = null;
  const exited = new Promise<WorkerExit>((done) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      done(exit);
    });
  });
  return {
    name,
    child,
    output: () => output,
    exited,
    exit: () => exit,
    signal: (signal) => {
      if (exit === null) child.kill(signal);
    },
    kill: async () => {
      if (exit === null) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** Kills every process of the list that still runs and waits for them. */
export async function killAll(workers: WorkerProcess[]): Promise<void> {
  await Promise.all(workers.splice(0).map((worker) => worker.kill()));
}

/**
 * Polls `condition` until it returns true or `timeoutMs` passes, then fails with `describe()` (the state
 * that was waited on, the workers' output). Not a timing pass mark: the deadline is only a safety net.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; describe: () => string | Promise<string> },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) {
      throw new Error(`Waited ${options.timeoutMs} ms in vain: ${await options.describe()}`);
    }
    await new Promise((done) => setTimeout(done, options.intervalMs ?? 50));
  }
}
