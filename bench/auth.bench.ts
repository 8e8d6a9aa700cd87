/**
 * Authentication benchmark: requests per second of two credential paths on the built server, as a ratio
 * against bare Fastify answering the same JSON in the same run (this machine's absolute figures swing 2×).
 *
 *   npm run bench -- auth
 *   BENCH_BASELINE_DIST=/path/to/other/checkout/dist npm run bench -- auth   (before/after in one run)
 *   BENCH_PROFILE=functions BENCH_ONLY=wants npm run bench -- auth
 *       (where this build's CPU went, by function, in the scenarios whose name matches a pattern:
 *       BENCH_ONLY='wants$' for the key's list alone)
 *
 * - `GET /auth/me` with a back-office bearer token (bearer strategy: JWT check + one user lookup by _id);
 * - `GET /:appId/wants` with an `X-API-Key` (api-key strategy: one key lookup by hash, then the wants list);
 * - `GET /auth/me` with a token signed by another key: 401 after the signature check, no database work, so
 *   it shows what the pipeline itself (throttler, guard, JWT, error filter) costs;
 * - `GET /:appId/wants` with a well-formed API key that no key has: 401 (a client repeating a deleted key).
 *
 * Each server is `node dist/main.js` as a child process on one in-memory dev database (a database each),
 * with NODE_ENV=production and LOG_LEVEL=warn. autocannon runs 50 connections for BENCH_DURATION seconds
 * (default 10) per scenario, twice in alternating order, and the figures are the means. Requests carry a
 * rotating X-Forwarded-For (TRUST_PROXY=loopback) so the 600-per-minute limit per client does not turn the
 * measurement into one of 429 answers (the forged-token scenario's non-2xx are its expected 401s).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { serverProfile } from './cpu-profile';
import {
  type BenchServer,
  call,
  PROJECT_ROOT,
  runScenarios,
  type Scenario,
  startBareFastify,
  startServer,
} from './http-bench';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = 50;

interface Target {
  label: string;
  server: BenchServer;
  headers: {
    me: Record<string, string>;
    wants: Record<string, string>;
    forged: Record<string, string>;
    unknownKey: Record<string, string>;
  };
  wantsPath: string;
}

/** Starts one build's server and seeds an app with an API key and 20 wants. */
async function startTarget(
  label: string,
  dist: string,
  mongoUri: string,
  nodeArgs: string[] = [],
): Promise<Target> {
  const server = await startServer(dist, mongoUri, nodeArgs);
  const { baseUrl, admin } = server;
  const appId = 'bench-app';
  await call(baseUrl, 'POST', '/admin/apps', admin, { id: appId, name: 'Bench app' });
  const key = await call(baseUrl, 'POST', '/api-keys', admin, { appId, name: 'Bench key' });
  const apiKey = { 'x-api-key': String((key.data as Record<string, unknown>).key) };
  for (let i = 0; i < 20; i += 1) {
    await call(baseUrl, 'POST', `/${appId}/wants`, apiKey, {
      title: `Feature ${i}`,
      description: `A wish number ${i}`,
      category: 'ui',
    });
  }
  const token = admin.authorization.slice('Bearer '.length);
  return {
    label,
    server,
    headers: {
      me: admin,
      wants: apiKey,
      forged: { authorization: `Bearer ${forgedToken(token)}` },
      unknownKey: { 'x-api-key': `sk_${appId}_${'0'.repeat(64)}` },
    },
    wantsPath: `/${appId}/wants`,
  };
}

/** The same claims signed with another key: well-formed, refused at the signature. */
function forgedToken(token: string): string {
  const [header, payload] = token.split('.');
  const signature = createHmac('sha256', randomBytes(32)).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const dists: [string, string][] = [['after', join(PROJECT_ROOT, 'dist')]];
  if (process.env.BENCH_BASELINE_DIST) dists.unshift(['before', resolve(process.env.BENCH_BASELINE_DIST)]);

  // The same body size as /auth/me's answer.
  const bare = await startBareFastify({
    success: true,
    user: { id: '665f1c0a9d3e4b2a1c0d9e8f', email: 'bench-admin@example.com', name: 'Admin', role: 'admin' },
  });
  const profile = serverProfile();
  const only = process.env.BENCH_ONLY;
  const targets: Target[] = [];
  try {
    for (const [label, dist] of dists) {
      const nodeArgs = label === 'after' ? profile.nodeArgs : [];
      targets.push(
        await startTarget(label, dist, withDatabaseName(database.uri, `bench_auth_${label}`), nodeArgs),
      );
    }
    const scenarios: Scenario[] = [
      { name: 'bare Fastify', url: `${bare.baseUrl}/auth/me`, headers: {}, pid: bare.pid },
      ...targets.flatMap(({ label, server, headers, wantsPath }) => [
        { name: `${label} GET /auth/me`, url: `${server.baseUrl}/auth/me`, headers: headers.me },
        { name: `${label} GET /:appId/wants`, url: `${server.baseUrl}${wantsPath}`, headers: headers.wants },
        {
          name: `${label} GET /auth/me forged → 401`,
          url: `${server.baseUrl}/auth/me`,
          headers: headers.forged,
        },
        {
          name: `${label} GET /:appId/wants unknown key → 401`,
          url: `${server.baseUrl}${wantsPath}`,
          headers: headers.unknownKey,
        },
      ]),
    ];
    const chosen = scenarios.filter(
      ({ name }) => !only || name === 'bare Fastify' || new RegExp(only).test(name),
    );
    const means = await runScenarios(chosen, 'bare Fastify', {
      connections: CONNECTIONS,
      durationS: DURATION_S,
    });
    if (targets.length === 2) {
      for (const path of [
        'GET /auth/me',
        'GET /:appId/wants',
        'GET /auth/me forged → 401',
        'GET /:appId/wants unknown key → 401',
      ]) {
        const ratio = means.get(`after ${path}`)! / means.get(`before ${path}`)!;
        console.log(`${path}: after/before = ${ratio.toFixed(3)}`);
      }
    }
  } finally {
    await Promise.all(targets.map((target) => target.server.stop()));
    bare.stop();
    await database.stop();
  }
  profile.report('this build, all scenarios', 25);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
