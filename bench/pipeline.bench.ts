/**
 * Pipeline benchmark: requests per second of the shared request pipeline on the built server, as ratios
 * against bare Fastify answering the same JSON in the same run (this machine's absolute figures swing 2×).
 *
 *   npm run bench -- pipeline
 *   BENCH_PROFILE=1 npm run bench -- pipeline   (adds where the server's CPU time went, by package)
 *   BENCH_PROFILE=functions npm run bench -- pipeline   (and by function, total and self time)
 *   BENCH_ONLY=unknown npm run bench -- pipeline
 *       (only the scenarios whose name contains a word, and the baseline)
 *   BENCH_BASELINE_DIST=/other/checkout/dist npm run bench -- pipeline
 *       (that build's answers to the same paths beside, in one run)
 *
 * - an unknown route: the pipeline alone (hooks, security headers, request id, access log, the 404 envelope);
 * - `GET /health/live`: the pipeline plus a public route that never touches the database;
 * - `GET /health`: the readiness record, answered from figures refreshed in the background;
 * - `GET /auth/me` with a back-office bearer token: plus the throttler, the credential guard, JWT and one
 *   user lookup by _id.
 *
 * The server is `node dist/main.js` (NODE_ENV=production, LOG_LEVEL=info: the access log is part of the
 * pipeline) on an in-memory dev database; autocannon runs 50 connections for BENCH_DURATION seconds (default
 * 10) per scenario, twice in alternating order; the figures are the means. Requests carry a rotating
 * X-Forwarded-For (TRUST_PROXY=loopback), so the per-client limit does not turn them into 429s.
 */
import { join, resolve } from 'node:path';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { serverProfile } from './cpu-profile';
import { PROJECT_ROOT, runScenarios, startBareFastify, startServer } from './http-bench';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const profile = serverProfile();
  const server = await startServer(
    join(PROJECT_ROOT, 'dist'),
    withDatabaseName(database.uri, 'bench_pipeline'),
    profile.nodeArgs,
    { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
  );
  // About the size of the service's answers here (the 404 envelope, the liveness record, /auth/me).
  const before = process.env.BENCH_BASELINE_DIST
    ? await startServer(
        resolve(process.env.BENCH_BASELINE_DIST),
        withDatabaseName(database.uri, 'bench_before'),
        [],
        {
          LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        },
      )
    : undefined;
  const bare = await startBareFastify({
    success: true,
    user: { id: '665f1c0a9d3e4b2a1c0d9e8f', email: 'bench-admin@example.com', name: 'Admin', role: 'admin' },
  });
  try {
    const only = process.env.BENCH_ONLY;
    // The same paths on both builds, the baseline's right after this build's, so drift hits both alike.
    const paths: { name: string; path: string; admin?: boolean }[] = [
      { name: 'unknown route (404)', path: '/no/such/route' },
      { name: 'GET /health/live', path: '/health/live' },
      { name: 'GET /health', path: '/health' },
      { name: 'GET /auth/me', path: '/auth/me', admin: true },
    ];
    const scenarios = paths.flatMap(({ name, path, admin }) => [
      { name, url: `${server.baseUrl}${path}`, headers: admin ? server.admin : {}, pid: server.pid },
      ...(before
        ? [
            {
              name: `before: ${name}`,
              url: `${before.baseUrl}${path}`,
              headers: admin ? before.admin : {},
              pid: before.pid,
            },
          ]
        : []),
    ]);
    await runScenarios(
      [
        { name: 'bare Fastify', url: `${bare.baseUrl}/auth/me`, headers: {}, pid: bare.pid },
        ...scenarios,
      ].filter(({ name }) => !only || name === 'bare Fastify' || name.includes(only)),
      'bare Fastify',
      { connections: 50, durationS: DURATION_S },
    );
  } finally {
    await server.stop();
    await before?.stop();
    bare.stop();
    await database.stop();
  }
  profile.report('all scenarios', 25);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
