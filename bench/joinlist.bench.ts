/**
 * Joinlist benchmark: `POST /joinlist` requests per second on the built server against bare Fastify
 * answering the same JSON to the same POST, in one run.
 *
 *   npm run bench -- joinlist
 *   BENCH_PROFILE=1 npm run bench -- joinlist   (also: where the server's CPU time goes during signups)
 *   BENCH_BASELINE_DIST=/path/to/other/dist npm run bench -- joinlist
 *       (also that build's signups, as "before")
 *
 * Scenarios, each with a unique address and a unique client IP (X-Forwarded-For, TRUST_PROXY=loopback) per
 * request, so the 10-per-minute limit per client never answers instead of the route:
 * - new signups: the whole path (publishable key + Origin, validation, person upsert and ledger event,
 *   welcome template lookup, welcome job insert, signup event);
 * - honeypot: the same request with `website` filled, which stops after validation: the difference to the
 *   full path is what the database work costs.
 * The server runs without the e-mail worker (the welcome jobs are queued, not sent).
 */
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
const ORIGIN = 'https://www.bench.test';

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const profile = serverProfile();
  const server = await startServer(
    join(PROJECT_ROOT, 'dist'),
    withDatabaseName(database.uri, 'bench_joinlist'),
    profile.nodeArgs,
  );
  const before = process.env.BENCH_BASELINE_DIST
    ? await startServer(
        resolve(process.env.BENCH_BASELINE_DIST),
        withDatabaseName(database.uri, 'bench_joinlist_before'),
      )
    : undefined;
  const publicKey = await benchApp(server);
  const beforeKey = before ? await benchApp(before) : undefined;
  // An answer like the route's (its unsubscribe URL is about 130 characters).
  const bare = await startBareFastify({
    success: true,
    alreadySubscribed: false,
    unsubscribeUrl: `http://localhost:3000/unsubscribe/${'x'.repeat(95)}`,
  });
  const page = { 'x-app-key': publicKey, origin: ORIGIN };
  const beforePage = { 'x-app-key': beforeKey ?? '', origin: ORIGIN };
  const signup = (n: number) => ({ email: `reader-${n}@bench.test`, firstName: 'Reader', locale: 'en' });
  const scenarios: Scenario[] = [
    { name: 'bare Fastify', url: `${bare.baseUrl}/joinlist`, method: 'POST', headers: {}, body: signup },
    {
      name: 'POST /joinlist (new signups)',
      url: `${server.baseUrl}/joinlist`,
      method: 'POST',
      headers: page,
      body: signup,
    },
    ...(before
      ? [
          {
            name: 'before: POST /joinlist (new signups)',
            url: `${before.baseUrl}/joinlist`,
            method: 'POST' as const,
            headers: beforePage,
            body: signup,
          },
        ]
      : []),
    {
      name: 'POST /joinlist (honeypot: no database work)',
      url: `${server.baseUrl}/joinlist`,
      method: 'POST',
      headers: page,
      body: (n) => ({ ...signup(n), website: 'https://spam.test' }),
    },
  ];
  try {
    await runScenarios(scenarios, 'bare Fastify', { connections: CONNECTIONS, durationS: DURATION_S });
  } finally {
    await server.stop();
    await before?.stop();
    bare.stop();
    await database.stop();
  }
  profile.report('all scenarios and seeding');
}

/** The bench app (its pages' origin allowed); its publishable key. */
async function benchApp(server: BenchServer): Promise<string> {
  const created = await call(server.baseUrl, 'POST', '/admin/apps', server.admin, {
    id: 'bench-app',
    name: 'Bench app',
    allowedOrigins: [ORIGIN],
  });
  return String((created.data as Record<string, unknown>).publicKey);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
