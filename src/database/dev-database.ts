import { ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';

/**
 * Where the launcher's pom.xml and Java class live (tools/mongo-dev-server at the project root): the nearest
 * ancestor of this file that holds it, so the code finds it from src/ (tests), dist/ and other build outputs
 * (the benchmarks compile to a directory of their own).
 */
function findLauncherDir(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'tools', 'mongo-dev-server');
    if (existsSync(join(candidate, 'pom.xml'))) return candidate;
    if (dirname(dir) === dir) return resolve(__dirname, '..', '..', 'tools', 'mongo-dev-server');
  }
}

const LAUNCHER_DIR = findLauncherDir();
const LAUNCHER_JAR = join(LAUNCHER_DIR, 'target', 'mongo-dev-server-1.0.0.jar');
const MAIN_CLASS = 'dev.adminservice.MongoDevServer';
const READY_TIMEOUT_MS = 60_000;

/**
 * JVM settings of every launch. The dev database idles most of the time: G1 runs a collection after 30 s
 * without one and hands the freed heap back to the system (free share above 30 % is uncommitted), so the
 * process shrinks again after a burst instead of keeping its peak for good. The heap starts small for
 * the same reason; two malloc arenas keep native memory from fragmenting across the server's threads.
 */
const JVM_OPTIONS = [
  '-Xss4m',
  '-Xms16m',
  '-XX:+UseG1GC',
  '-XX:G1PeriodicGCInterval=30000',
  '-XX:MinHeapFreeRatio=10',
  '-XX:MaxHeapFreeRatio=30',
];

export interface DevDatabase {
  /** Connection string without a database name, e.g. `mongodb://127.0.0.1:40123`. */
  readonly uri: string;
  /** The JVM's process id (to watch its memory). */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * When the file-backed database answers a write: `commit` once it is committed and synced to the file (no
 * acknowledged write is lost to a crash), `delayed` at once, leaving the commit to the store's background
 * writer (about a second later: faster, and a crash loses what was not yet written).
 */
export type DevDatabaseDurability = 'commit' | 'delayed';

export interface DevDatabaseOptions {
  /** H2 MVStore file for persistent data; omitted means an in-memory database. */
  file?: string;
  /** For a file-backed database; `commit` when omitted. */
  durability?: DevDatabaseDurability;
  port?: number;
  /**
   * The JVM's heap limit (`-Xmx`), e.g. `512m`. The file-backed database keeps its data on disk and needs
   * only caches and the working set of a query; without a limit the JVM may take a quarter of the RAM and
   * keep it. Omitted: the JVM's own default, which the in-memory database (its data is the heap) needs.
   */
  maxHeap?: string;
  /**
   * Receives what the launcher says: the Maven build on first use, the Java process's own lines once it
   * runs (anything on stderr is a warning), its unexpected exit. Without it they are dropped.
   */
  log?: (level: 'info' | 'warn' | 'error', line: string) => void;
}

/**
 * The H2 file is held by another process (H2 locks it while open): another instance on the same data
 * directory. Its own message is a Java stack trace; callers name their setting instead.
 */
export class DevDatabaseFileLockedError extends Error {
  constructor(readonly file: string) {
    super(`The dev database file ${file} is locked by another process`);
  }
}
const FILE_LOCKED = /MVStoreException: The file is locked/;

/**
 * What the Java process wrote before it failed to start, kept for the error (bounded: it may loop on an
 * error).
 */
const MAX_STARTUP_OUTPUT = 8_000;

function requireTool(command: string, args: string[], install: string): void {
  const probe = spawnSync(command, args, { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `The embedded dev database needs ${command}, which was not found on PATH. ${install} ` +
        'Or set MONGODB_URI to use an existing MongoDB server.',
    );
  }
}

/** Maven and the JVM may colour their output; in a log (JSON especially) the codes are noise. */
const TERMINAL_CODES = /\u001b\[[0-9;?]*[A-Za-z]/g;
const withoutTerminalCodes = (line: string) => line.replace(TERMINAL_CODES, '');

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(...readdirSync(path).map((name) => newestChange(join(path, name))));
}

/** The jar exists and is newer than the launcher's sources, so a changed launcher is rebuilt. */
function launcherIsCurrent(): boolean {
  if (!existsSync(LAUNCHER_JAR) || !existsSync(join(LAUNCHER_DIR, 'target', 'lib'))) return false;
  const sources = Math.max(
    newestChange(join(LAUNCHER_DIR, 'pom.xml')),
    newestChange(join(LAUNCHER_DIR, 'src')),
  );
  return statSync(LAUNCHER_JAR).mtimeMs >= sources;
}

/**
 * Builds the launcher when it is missing or older than its sources; Maven downloads mongo-java-server
 * from Maven Central on the first run.
 */
export function buildDevDatabaseLauncher(log?: DevDatabaseOptions['log']): void {
  if (launcherIsCurrent()) return;
  log?.(
    'info',
    'Building the embedded dev database launcher (the first time, Maven downloads it; again after it changed)',
  );
  requireTool(
    'java',
    ['-version'],
    'Install Java 17 or newer (e.g. `apt-get install openjdk-17-jre-headless`).',
  );
  requireTool('mvn', ['-v'], 'Install Maven (e.g. `apt-get install maven`).');
  const build = spawnSync('mvn', ['-q', '-B', 'package', '-DskipTests'], {
    cwd: LAUNCHER_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  const output = `${build.stdout ?? ''}${build.stderr ?? ''}`
    .split('\n')
    .map(withoutTerminalCodes)
    .filter((line) => line.trim() !== '');
  if (build.status !== 0) {
    throw new Error(
      `Building the dev database launcher failed (mvn exit code ${build.status}) in ${LAUNCHER_DIR}:\n` +
        output.slice(-30).join('\n'),
    );
  }
  for (const line of output) log?.('info', line);
}

/**
 * Resolves with the URI of the READY line. Later lines of the process (stdout and stderr) go to `log`, so
 * they reach the service's log in its format instead of the terminal.
 */
async function waitForReadyLine(
  child: ChildProcessWithoutNullStreams,
  options: DevDatabaseOptions,
): Promise<string> {
  const { log } = options;
  const lines = createInterface({ input: child.stdout });
  let ready = false;
  let stderr = '';
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (ready) log?.('warn', withoutTerminalCodes(line));
    else if (stderr.length < MAX_STARTUP_OUTPUT) stderr += `${line}\n`;
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`The dev database did not start within ${READY_TIMEOUT_MS} ms. ${stderr}`));
    }, READY_TIMEOUT_MS);
    lines.on('line', (line) => {
      const match = ready ? null : /^READY (mongodb:\/\/\S+)$/.exec(line);
      if (match) {
        ready = true;
        clearTimeout(timer);
        resolvePromise(match[1]);
      } else if (ready) {
        log?.('info', withoutTerminalCodes(line));
      }
    });
    // 'close', not 'exit': by then every line of stderr has been read.
    child.once('close', (code) => {
      clearTimeout(timer);
      if (options.file && FILE_LOCKED.test(stderr)) reject(new DevDatabaseFileLockedError(options.file));
      else reject(new Error(`The dev database exited with code ${code} before it was ready. ${stderr}`));
    });
  });
}

async function waitForPing(uri: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 });
  try {
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

/**
 * Starts the embedded dev database (mongo-java-server) on 127.0.0.1 and resolves once it answers `ping`.
 * The child reads its standard input and exits when it closes, so it stops with this process even if
 * this process is killed.
 */
export async function startDevDatabase(options: DevDatabaseOptions = {}): Promise<DevDatabase> {
  buildDevDatabaseLauncher(options.log);
  const args = ['-cp', `${LAUNCHER_JAR}:${join(LAUNCHER_DIR, 'target', 'lib', '*')}`, MAIN_CLASS];
  args.push('--port', String(options.port ?? 0));
  if (options.file) args.push('--file', resolve(options.file));
  if (options.file && options.durability) args.push('--durability', options.durability);

  const heap = options.maxHeap ? [`-Xmx${options.maxHeap}`] : [];
  const child = spawn('java', [...JVM_OPTIONS, ...heap, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, MALLOC_ARENA_MAX: '2' },
  });
  const uri = await waitForReadyLine(child, options);
  await waitForPing(uri);

  let stopping = false;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.once('exit', (code, signal) => {
    if (!stopping)
      options.log?.('error', `The dev database exited unexpectedly (${signal ?? `code ${code}`})`);
  });
  return {
    uri,
    // Set once the process has started, which the READY line proves.
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Adds a database name to a connection string that has none (`mongodb://host:port` → `.../name`). */
export function withDatabaseName(uri: string, name: string): string {
  const url = new URL(uri);
  url.pathname = `/${name}`;
  return url.toString();
}
