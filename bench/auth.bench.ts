/**
 * Authentication benchmark: requests per second of two credential paths on the built server, as a ratio
 * against bare Fastify answering the same JSON in the same run (this machine's absolute figures swing 2×).
 *
 *   npm run bench:auth
 *   BENCH_BASELINE_DIST=/path/to/other/checkout/dist npm run bench:auth   (before/after in one run)
 *
 * - `GET /auth/me` with a back-office bearer token (bearer strategy: JWT check + one user lookup by _id);
 * - `GET /:appId/wants` with an `X-API-Key` (api-key strategy: one key lookup by hash, then the wants list);
 * - `GET /auth/me` with a token signed by another key: 401 after the signature check, no database work, so
 *   it shows what the pipeline itself (throttler, guard, Passport, JWT, error filter) costs.
 *
 * Each server is `node dist/main.js` as a child process on one in-memory dev database (a database each),
 * with NODE_ENV=production and LOG_LEVEL=warn. autocannon runs 50 connections for BENCH_DURATION seconds
 * (default 10) per scenario, twice in alternating order, and the figures are the means. Requests carry a
 * rotating X-Forwarded-For (TRUST_PROXY=true) so the 600-per-minute limit per client does not turn the
 * measurement into one of 429 answers.
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = 50;
const CLIENT_IPS = 2_000;
const ADMIN = { email: 'bench-admin@example.com', password: 'bench-password-1' };
const PROJECT_ROOT = resolve(__dirname, '..', '..', '..');

interface Target {
  label: string;
  baseUrl: string;
  headers: { me: Record<string, string>; wants: Record<string, string>; forged: Record<string, string> };
  wantsPath: string;
  stop(): void;
}

function freePort(): Promise<number> {
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

async function call(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: object,
) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Starts one build's server and seeds an admin token, an app with an API key and 20 wants. */
async function startServer(label: string, dist: string, mongoUri: string): Promise<Target> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-auth-'));
  const child = spawn(process.execPath, [join(dist, 'main.js')], {
    cwd: resolve(dist, '..'),
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      MONGODB_URI: mongoUri,
      DATA_DIR: dataDir,
      APP_SECRET: randomBytes(32).toString('hex'),
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      BCRYPT_COST: '10',
      EMAIL_WORKER_ENABLED: 'false',
      TRUST_PROXY: 'true',
    },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, child);

  const login = await call(baseUrl, 'POST', '/auth/login', {}, ADMIN);
  const bearer = { authorization: `Bearer ${String(login.token)}` };
  const appId = 'bench-app';
  await call(baseUrl, 'POST', '/admin/apps', bearer, { id: appId, name: 'Bench app' });
  const key = await call(baseUrl, 'POST', '/api-keys', bearer, { appId, name: 'Bench key' });
  const apiKey = { 'x-api-key': String((key.data as Record<string, unknown>).key) };
  for (let i = 0; i < 20; i += 1) {
    await call(baseUrl, 'POST', `/${appId}/wants`, apiKey, {
      title: `Feature ${i}`,
      description: `A wish number ${i}`,
      category: 'ui',
    });
  }
  return {
    label,
    baseUrl,
    headers: {
      me: bearer,
      wants: apiKey,
      forged: { authorization: `Bearer ${forgedToken(String(login.token))}` },
    },
    wantsPath: `/${appId}/wants`,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The same claims signed with another key: well-formed, refused at the signature. */
function forgedToken(token: string): string {
  const [header, payload] = token.split('.');
  const signature = createHmac('sha256', randomBytes(32)).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** Bare Fastify answering a JSON body of the same size, in a process of its own like the servers. */
async function startBareFastify(): Promise<{ baseUrl: string; stop(): void }> {
  const port = await freePort();
  const body = JSON.stringify({
    success: true,
    user: { id: '665f1c0a9d3e4b2a1c0d9e8f', email: ADMIN.email, name: 'Admin', role: 'admin' },
  });
  const code = `
    const app = require('fastify')();
    app.get('/*', async (_req, reply) => reply.type('application/json').send(${JSON.stringify(body)}));
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
  return { baseUrl, stop: () => child.kill('SIGTERM') };
}

let requestCounter = 0;

async function measure(
  url: string,
  headers: Record<string, string>,
): Promise<{ rps: number; non2xx: number }> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers,
    requests: [
      {
        setupRequest: (request) => {
          requestCounter += 1;
          const ip = `10.${(requestCounter % CLIENT_IPS) >> 8}.${requestCounter % 256}.1`;
          return { ...request, headers: { ...request.headers, 'x-forwarded-for': ip } };
        },
      },
    ],
  });
  return { rps: result.requests.average, non2xx: result.non2xx + result.errors + result.timeouts };
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const dists: [string, string][] = [['after', join(PROJECT_ROOT, 'dist')]];
  if (process.env.BENCH_BASELINE_DIST) dists.unshift(['before', resolve(process.env.BENCH_BASELINE_DIST)]);

  const bare = await startBareFastify();
  const targets: Target[] = [];
  try {
    for (const [label, dist] of dists) {
      targets.push(await startServer(label, dist, withDatabaseName(database.uri, `bench_auth_${label}`)));
    }
    const scenarios: { name: string; url: string; headers: Record<string, string> }[] = [
      { name: 'bare Fastify', url: `${bare.baseUrl}/auth/me`, headers: {} },
      ...targets.flatMap((target) => [
        {
          name: `${target.label} GET /auth/me`,
          url: `${target.baseUrl}/auth/me`,
          headers: target.headers.me,
        },
        {
          name: `${target.label} GET /:appId/wants`,
          url: `${target.baseUrl}${target.wantsPath}`,
          headers: target.headers.wants,
        },
        {
          name: `${target.label} GET /auth/me forged → 401`,
          url: `${target.baseUrl}/auth/me`,
          headers: target.headers.forged,
        },
      ]),
    ];
    // A short warm-up each (JIT, connection pools), then two rounds in alternating order.
    for (const scenario of scenarios) {
      await autocannon({ url: scenario.url, connections: 10, amount: 500, headers: scenario.headers });
    }
    const results = new Map<string, { rps: number[]; non2xx: number }>();
    for (const round of [scenarios, [...scenarios].reverse()]) {
      for (const scenario of round) {
        const { rps, non2xx } = await measure(scenario.url, scenario.headers);
        const entry = results.get(scenario.name) ?? { rps: [], non2xx: 0 };
        entry.rps.push(rps);
        entry.non2xx += non2xx;
        results.set(scenario.name, entry);
      }
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const bareRps = mean(results.get('bare Fastify')!.rps);
    const rows = [...results].map(([name, { rps, non2xx }]) => ({
      scenario: name,
      'req/s': Math.round(mean(rps)),
      'ratio to bare Fastify': Number((mean(rps) / bareRps).toFixed(3)),
      'non-2xx (401 expected when forged)': non2xx,
    }));
    console.table(rows);
    if (targets.length === 2) {
      for (const path of ['GET /auth/me', 'GET /:appId/wants', 'GET /auth/me forged → 401']) {
        const after = mean(results.get(`after ${path}`)!.rps);
        const before = mean(results.get(`before ${path}`)!.rps);
        console.log(`${path}: after/before = ${(after / before).toFixed(3)}`);
      }
    }
  } finally {
    for (const target of targets) target.stop();
    bare.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
