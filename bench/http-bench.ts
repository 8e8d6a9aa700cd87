/**
 * What the HTTP benchmarks share: starting the built server and a bare Fastify baseline as child processes,
 * seeding through the API, and measuring with autocannon. Figures are ratios against the baseline measured
 * in the same run, because this machine's absolute numbers swing 2× between runs.
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { cpuSecondsOf } from './process-cpu';

export const PROJECT_ROOT = resolve(__dirname, '..', '..', '..');
/** What bench/command-count.js, preloaded into the server, answers to and with. */
const COMMAND_COUNT_MESSAGE = 'db-command-count';
export const BENCH_ADMIN = { email: 'bench-admin@example.com', password: 'bench-password-1' };

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no port')),
      );
    });
  });
}

async function waitForHealth(baseUrl: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${baseUrl}: server exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${baseUrl}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${baseUrl}: not healthy within 60 s`);
}

/** One JSON request to a bench server; a non-2xx answer stops the benchmark. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: object,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export interface BenchServer {
  baseUrl: string;
  /** The server's process id (its CPU time is read from /proc). */
  pid: number;
  /** The bootstrap admin's bearer header. */
  admin: Record<string, string>;
  /** The database commands the server has sent since it started (its driver's command monitoring). */
  dbCommands(): Promise<number>;
  /** SIGTERM, resolved once the process has exited (and written a `--cpu-prof` profile, if asked). */
  stop(): Promise<void>;
}

/**
 * The started servers by base URL: a scenario on one of them gets its CPU time and database commands per
 * request without naming them.
 */
const startedServers = new Map<string, { pid: number; dbCommands: () => Promise<number> }>();

const startedServerOf = (scenario: Scenario) =>
  [...startedServers].find(([baseUrl]) => scenario.url.startsWith(`${baseUrl}/`))?.[1];

/**
 * Asks the server (over its IPC channel) how many database commands it has sent. A build from before the
 * counter existed (a BENCH_BASELINE_DIST) never answers: NaN, shown as an empty cell.
 */
function commandCountOf(child: ChildProcess): Promise<number> {
  return new Promise((done) => {
    const timer = setTimeout(() => {
      child.off('message', listener);
      done(Number.NaN);
    }, 2_000);
    const listener = (message: unknown) => {
      const answer = message as { type?: string; commands?: number };
      if (answer?.type !== COMMAND_COUNT_MESSAGE) return;
      clearTimeout(timer);
      child.off('message', listener);
      done(answer.commands ?? 0);
    };
    child.on('message', listener);
    child.send(COMMAND_COUNT_MESSAGE);
  });
}

/**
 * `node <dist>/main.js` on its own port and database, NODE_ENV=production, LOG_LEVEL=warn, no e-mail
 * worker, TRUST_PROXY=loopback (requests name their client with X-Forwarded-For), counting its database
 * commands (reported over an IPC channel: `dbCommands()`). `nodeArgs` are passed to
 * node (e.g. `--cpu-prof`); `env` adds or replaces variables (e.g. a known APP_SECRET to sign link tokens).
 */
export async function startServer(
  dist: string,
  mongoUri: string,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<BenchServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const counter = join(PROJECT_ROOT, 'bench', 'command-count.js');
  const child = spawn(process.execPath, ['--require', counter, ...nodeArgs, join(dist, 'main.js')], {
    cwd: resolve(dist, '..'),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      MONGODB_URI: mongoUri,
      DATA_DIR: dataDir,
      APP_SECRET: randomBytes(32).toString('hex'),
      ADMIN_EMAIL: BENCH_ADMIN.email,
      ADMIN_PASSWORD: BENCH_ADMIN.password,
      BCRYPT_COST: '10',
      EMAIL_WORKER_ENABLED: 'false',
      TRUST_PROXY: 'loopback',
      // What production requires to start; no mail is sent by these benches.
      EMAIL_TRANSPORT: 'outbox',
      MAIL_FROM: 'Bench <bench@mail.example.com>',
      PUBLIC_BASE_URL: 'https://mail.example.com',
      ...env,
    },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, child);
  const login = await call(baseUrl, 'POST', '/auth/login', {}, BENCH_ADMIN);
  startedServers.set(baseUrl, { pid: child.pid!, dbCommands: () => commandCountOf(child) });
  return {
    baseUrl,
    pid: child.pid!,
    admin: { authorization: `Bearer ${String(login.token)}` },
    dbCommands: () => commandCountOf(child),
    stop: async () => {
      startedServers.delete(baseUrl);
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Bare Fastify in a process of its own, answering `body` (JSON) to any GET or POST; POST bodies are parsed
 * by Fastify's JSON parser, as the server parses its own.
 */
export async function startBareFastify(body: object): Promise<BareServer> {
  const port = await freePort();
  const text = JSON.stringify(JSON.stringify(body));
  const code = `
    const app = require('fastify')();
    const answer = async (_req, reply) => reply.type('application/json').send(${text});
    app.get('/*', answer);
    app.post('/*', answer);
    app.listen({ port: ${port}, host: '127.0.0.1' });`;
  const child = spawn(process.execPath, ['-e', code], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i += 1) {
    try {
      await fetch(baseUrl);
      break;
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return { baseUrl, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

export interface BareServer {
  baseUrl: string;
  pid: number;
  stop(): void;
}

export interface Scenario {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The body of request number `n` (unique data per request), for POST scenarios. */
  body?: (n: number) => object;
  /**
   * The answering server's process id: adds its CPU time per request to the table. By default the process
   * of the server (started by startServer) that `url` names.
   */
  pid?: number;
  /** The dev database the server writes to: adds its CPU time per request to the table. */
  databasePid?: number;
  /** The path of request number `n`, when requests differ (by default every request asks `url`). */
  path?: (n: number) => string;
  /** Headers of request number `n` that depend on its body (a signature, say). */
  headersOf?: (n: number, body: string) => Record<string, string>;
  /**
   * The answering server's database commands so far: adds commands per request. By default the counter of
   * the server (started by startServer) that `url` names.
   */
  dbCommands?: () => Promise<number>;
}

/** Where a unit of work's cost is read: a server's process (CPU time) and its command counter. */
export interface CostSource {
  pid?: number;
  dbCommands?: () => Promise<number>;
}

/** A server's CPU time (µs) and database commands per unit of work (undefined where not measured). */
export interface UnitCost {
  cpuUs?: number;
  commands?: number;
}

/**
 * Starts counting a server's CPU time and database commands; the function it returns divides what was spent
 * since by the units of work done meanwhile (requests, events, messages): what every bench prints beside its
 * rates.
 */
export async function costMeter(source: CostSource): Promise<(units: number) => Promise<UnitCost>> {
  const cpuBefore = cpuSecondsOf(source.pid);
  const commandsBefore = await source.dbCommands?.();
  return async (units) => {
    const cpuAfter = cpuSecondsOf(source.pid);
    const commandsAfter = await source.dbCommands?.();
    const per = (before: number | undefined, after: number | undefined, scale: number) =>
      before !== undefined &&
      after !== undefined &&
      Number.isFinite(before) &&
      Number.isFinite(after) &&
      units > 0
        ? ((after - before) * scale) / units
        : undefined;
    return { cpuUs: per(cpuBefore, cpuAfter, 1_000_000), commands: per(commandsBefore, commandsAfter, 1) };
  };
}

/** The two columns of a UnitCost, named per `unit` ("req", "event", …), for console.table rows. */
export function costColumns(cost: UnitCost, unit = 'req'): Record<string, number | string> {
  return {
    [`server CPU µs/${unit}`]: cost.cpuUs === undefined ? '' : Math.round(cost.cpuUs),
    [`db commands/${unit}`]: cost.commands === undefined ? '' : Number(cost.commands.toPrecision(3)),
  };
}

let requestCounter = 0;

/** A client address per request number: 16 million distinct ones, so per-IP limits never bite. */
export const clientIpOf = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

async function measure(
  scenario: Scenario,
  options: { connections: number; durationS: number; amount?: number },
): Promise<{ rps: number; non2xx: number; cpu: CpuPerRequest; commands?: number }> {
  const started = startedServerOf(scenario);
  const pid = scenario.pid ?? started?.pid;
  const serverCost = await costMeter({ pid, dbCommands: scenario.dbCommands ?? started?.dbCommands });
  const databaseCost = await costMeter({ pid: scenario.databasePid });
  const clientBefore = process.cpuUsage();
  const result = await autocannon({
    url: scenario.url,
    method: scenario.method ?? 'GET',
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.durationS }),
    headers: { ...scenario.headers, ...(scenario.body ? { 'content-type': 'application/json' } : {}) },
    requests: [
      {
        setupRequest: (request) => {
          requestCounter += 1;
          const headers = { ...request.headers, 'x-forwarded-for': clientIpOf(requestCounter) };
          const path = scenario.path ? scenario.path(requestCounter) : request.path;
          if (!scenario.body) return { ...request, path, headers };
          const body = JSON.stringify(scenario.body(requestCounter));
          const signed = scenario.headersOf?.(requestCounter, body) ?? {};
          return { ...request, path, headers: { ...headers, ...signed }, body };
        },
      },
    ],
  });
  const client = process.cpuUsage(clientBefore);
  // Work the requests left behind (events written within a second) is theirs, not the next scenario's.
  if (scenario.databasePid) await idle([pid, scenario.databasePid]);
  const answered = result.requests.total;
  const server = await serverCost(answered);
  return {
    rps: result.requests.average,
    non2xx: result.non2xx + result.errors + result.timeouts,
    cpu: {
      server: server.cpuUs,
      database: (await databaseCost(answered)).cpuUs,
      client: answered > 0 ? (client.user + client.system) / answered : undefined,
    },
    commands: server.commands,
  };
}

/** Waits until these processes use under a tenth of a core (at most 10 s). */
async function idle(pids: (number | undefined)[]): Promise<void> {
  const busy = () => pids.reduce<number>((sum, pid) => sum + (cpuSecondsOf(pid) ?? 0), 0);
  for (let waited = 0, last = busy(); waited < 10_000; waited += 500) {
    await new Promise((done) => setTimeout(done, 500));
    const now = busy();
    if (now - last < 0.05) return;
    last = now;
  }
}

/**
 * CPU time per request (µs) of the answering server, of the dev database it writes to, and of this process
 * (the load generator): on a machine of two cores the three share, their sum is what bounds the requests
 * per second.
 */
type CpuPerRequest = { server?: number; database?: number; client?: number };

/**
 * A short warm-up per scenario, then two rounds in alternating order (drift and warm-up effects cancel);
 * prints a table of mean requests per second and the ratio to the scenario named `baseline`.
 */
export async function runScenarios(
  scenarios: Scenario[],
  baseline: string,
  options: { connections: number; durationS: number },
): Promise<Map<string, number>> {
  for (const scenario of scenarios) {
    await measure(scenario, { connections: 10, durationS: 0, amount: 500 });
  }
  const results = new Map<
    string,
    { rps: number[]; cpu: CpuPerRequest[]; commands: number[]; non2xx: number }
  >();
  for (const round of [scenarios, [...scenarios].reverse()]) {
    for (const scenario of round) {
      const { rps, non2xx, cpu, commands } = await measure(scenario, options);
      const entry = results.get(scenario.name) ?? { rps: [], cpu: [], commands: [], non2xx: 0 };
      entry.rps.push(rps);
      entry.cpu.push(cpu);
      if (commands !== undefined) entry.commands.push(commands);
      entry.non2xx += non2xx;
      results.set(scenario.name, entry);
    }
  }
  const means = new Map([...results].map(([name, { rps }]) => [name, mean(rps)]));
  const cpuMean = (name: string, part: keyof CpuPerRequest) =>
    mean(results.get(name)!.cpu.flatMap((cpu) => (cpu[part] === undefined ? [] : [cpu[part]])));
  const rounded = (value: number) => (Number.isNaN(value) ? '' : Math.round(value));
  const baselineRps = means.get(baseline)!;
  const baselineCpu = cpuMean(baseline, 'server');
  const showDatabase = scenarios.some((scenario) => scenario.databasePid !== undefined);
  console.table(
    [...results].map(([name, { non2xx, commands }]) => {
      // The baseline's CPU per request over this one's: the throughput ratio a CPU-bound server would reach.
      const cpuRatio = baselineCpu / cpuMean(name, 'server');
      return {
        scenario: name,
        'req/s': Math.round(means.get(name)!),
        [`ratio to ${baseline}`]: Number((means.get(name)! / baselineRps).toFixed(3)),
        'server CPU µs/req': rounded(cpuMean(name, 'server')),
        'CPU ratio': Number.isNaN(cpuRatio) ? '' : Number(cpuRatio.toFixed(3)),
        ...(showDatabase ? { 'dev DB CPU µs/req': rounded(cpuMean(name, 'database')) } : {}),
        'load generator CPU µs/req': rounded(cpuMean(name, 'client')),
        // Counted by the server's driver, so it holds however noisy the machine is (see BenchServer).
        'db commands/req': commands.length ? Number(mean(commands).toFixed(2)) : '',
        'non-2xx': non2xx,
      };
    }),
  );
  return means;
}

/** A server a bench compares, with what its scenarios need. */
export interface BuildTarget {
  label: string;
  server: BenchServer;
}

/**
 * The usual main of an HTTP bench: a dev database, bare Fastify answering `bareBody`, this checkout's build
 * ("after") and BENCH_BASELINE_DIST's ("before", first) started by `start` on a database each, then
 * `scenarios` of each build measured against bare Fastify (runScenarios), and everything stopped.
 */
export async function compareBuilds<T extends BuildTarget>(options: {
  bench: string;
  bareBody: object;
  start: (label: string, dist: string, mongoUri: string) => Promise<T>;
  scenarios: (target: T) => Scenario[];
  connections: number;
  durationS: number;
}): Promise<Map<string, number>> {
  const database = await startDevDatabase();
  const builds: [string, string][] = [['after', join(PROJECT_ROOT, 'dist')]];
  if (process.env.BENCH_BASELINE_DIST) builds.unshift(['before', resolve(process.env.BENCH_BASELINE_DIST)]);
  const bare = await startBareFastify(options.bareBody);
  const targets: T[] = [];
  try {
    for (const [label, dist] of builds) {
      const uri = withDatabaseName(database.uri, `bench_${options.bench}_${label}`);
      targets.push(await options.start(label, dist, uri));
    }
    const baseline: Scenario = { name: 'bare Fastify', url: `${bare.baseUrl}/`, headers: {}, pid: bare.pid };
    return await runScenarios([baseline, ...targets.flatMap(options.scenarios)], baseline.name, options);
  } finally {
    await Promise.all(targets.map((target) => target.server.stop()));
    bare.stop();
    await database.stop();
  }
}

/** The mean, NaN for no values. */
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
