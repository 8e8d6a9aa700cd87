import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';

const PROJECT_ROOT = resolve(__dirname, '..', '..');

export interface CompiledWorker {
  /** The compiled `src/worker.ts`. */
  workerJs: string;
  /** The compiled `src/main.ts` (the HTTP server). */
  mainJs: string;
  /** A cache shared by test files and runs: never removed by a test. */
  dir: string;
}

/**
 * One cache per user: another user's build may be unreadable (umask) and their lock or stale build is not
 * ours to remove.
 */
const BUILD_PREFIX = `admin-service-build-${process.getuid?.() ?? 'user'}-`;
/** What the build depends on: the cache key. */
const BUILD_INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const BUILD_DONE = '.build-complete';
/** A lock older than this belongs to a run that died mid-build. */
const STALE_LOCK_MS = 5 * 60_000;
/**
 * Jest's limit for a hook that compiles: a build on a busy machine, or the wait for another run's build
 * (up to `STALE_LOCK_MS`), outlasts the 120 s default; a hook abandoned mid-build leaves the compiler
 * running and the test worker cannot exit.
 */
export const COMPILE_HOOK_MS = STALE_LOCK_MS + 60_000;
/** Builds of other source versions are removed once this old. */
const STALE_BUILD_MS = 24 * 60 * 60_000;

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

function sourceHash(): string {
  const hash = createHash('sha256');
  for (const file of BUILD_INPUTS.flatMap((input) => filesUnder(join(PROJECT_ROOT, input)))) {
    hash.update(relative(PROJECT_ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function entries(dir: string): CompiledWorker | undefined {
  const find = (name: string) => [join(dir, name), join(dir, 'src', name)].find((file) => existsSync(file));
  const [workerJs, mainJs] = [find('worker.js'), find('main.js')];
  if (!existsSync(join(dir, BUILD_DONE)) || !workerJs || !mainJs) return undefined;
  return { workerJs, mainJs, dir };
}

function removeStaleBuilds(current: string): void {
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (!name.startsWith(BUILD_PREFIX) || path === current || path === `${current}.lock`) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_BUILD_MS)
        rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another run meanwhile.
    }
  }
}

/**
 * Compiles the service with `tsconfig.build.json` (as `nest build` does) into a temporary directory named
 * by a hash of the sources, so the test files that start real processes, and later runs on unchanged
 * sources, share one build (tsc takes 20-40 s here). A lock directory makes concurrent Jest workers wait
 * for one compilation instead of running several. tsconfig.build.json sets no rootDir, so tsc infers `src/`
 * and writes `<dir>/worker.js`; `<dir>/src/worker.js` is accepted too. Type errors elsewhere still emit
 * JavaScript (no `noEmitOnError`), so only a missing entry point fails.
 */
export async function compileWorker(): Promise<CompiledWorker> {
  const dir = join(tmpdir(), `${BUILD_PREFIX}${sourceHash()}`);
  const lock = `${dir}.lock`;
  for (;;) {
    const built = entries(dir);
    if (built) return built;
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS)
          rmSync(lock, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      await new Promise((done) => setTimeout(done, 250));
    }
  }
  try {
    const built = entries(dir);
    if (built) return built;
    rmSync(dir, { recursive: true, force: true });
    removeStaleBuilds(dir);
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
    writeFileSync(join(dir, BUILD_DONE), '');
    const compiled = entries(dir);
    if (!compiled) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`tsc -p tsconfig.build.json emitted no worker.js or main.js:\n${output}`);
    }
    return compiled;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
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

/** Runs `node <worker.js>` as a real OS process (see `startCompiled`). */
export function startWorker(compiled: CompiledWorker, name: string, env: WorkerEnv): WorkerProcess {
  return startCompiled(compiled, compiled.workerJs, name, env);
}

/**
 * Runs `node <script>` of the build as a real OS process. The compiled code lives outside the project, so
 * NODE_PATH points at the project's node_modules; the working directory is the build directory, so no `.env`
 * of the project is read. Only the given variables (plus PATH) are passed on.
 */
export function startCompiled(
  compiled: CompiledWorker,
  script: string,
  name: string,
  env: WorkerEnv,
): WorkerProcess {
  const child = spawn(process.execPath, [script], {
    cwd: compiled.dir,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_PATH: join(PROJECT_ROOT, 'node_modules'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      // Its queries are recorded for the index-coverage gate, like the test process's (test/setup/).
      ...(process.env.QUERY_SHAPES_DIR ? { QUERY_SHAPES_DIR: process.env.QUERY_SHAPES_DIR } : {}),
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

export { waitFor } from './wait';
