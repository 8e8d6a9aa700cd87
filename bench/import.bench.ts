/**
 * Subscriber import benchmark: 100,000 new subscribers through
 * `POST /admin/{appId}/newsletter/subscribers/import` on the built server, in 10 requests of 10,000 (one
 * after the other, as an admin's upload would go).
 *
 *   npm run bench -- import
 *   BENCH_PROFILE=1 npm run bench -- import   (also: where the server's CPU time goes)
 *
 * Then two requests of 10,000 addresses that are already known, to show the slower path of existing
 * people: the same addresses again (all `already_subscribed`), and the same addresses for a second app
 * (each person gets the second app's subscription).
 */
import { join } from 'node:path';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { serverProfile } from './cpu-profile';
import { call, costColumns, costMeter, PROJECT_ROOT, startServer } from './http-bench';
import { cpuSecondsOf, devDatabasePid } from './process-cpu';

const REQUESTS = 10;
const PER_REQUEST = 10_000;

const entries = (from: number) =>
  Array.from({ length: PER_REQUEST }, (_, i) => ({
    email: `reader-${from + i}@bench.test`,
    firstName: 'Reader',
    locale: 'en',
  }));

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const profile = serverProfile();
  const server = await startServer(
    join(PROJECT_ROOT, 'dist'),
    withDatabaseName(database.uri, 'bench_import'),
    profile.nodeArgs,
  );
  const importInto = async (appId: string, from: number) => {
    const body = { subscribers: entries(from) };
    const perSubscriber = await costMeter(server);
    const started = process.hrtime.bigint();
    const res = await call(
      server.baseUrl,
      'POST',
      `/admin/${appId}/newsletter/subscribers/import`,
      server.admin,
      body,
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { imported, skipped } = res.data as { imported: number; skipped: number };
    return {
      seconds,
      imported,
      skipped,
      ...costColumns(await perSubscriber(body.subscribers.length), 'person'),
    };
  };
  try {
    for (const id of ['bench-app', 'bench-app-2']) {
      await call(server.baseUrl, 'POST', '/admin/apps', server.admin, { id, name: id });
    }
    const rows = [];
    let total = 0;
    // CPU seconds beside the wall time: on a machine shared with other work they vary much less.
    const dbPid = devDatabasePid();
    const cpuBefore = { server: cpuSecondsOf(server.pid), db: cpuSecondsOf(dbPid) };
    for (let n = 0; n < REQUESTS; n++) {
      const result = await importInto('bench-app', n * PER_REQUEST);
      total += result.seconds;
      rows.push({ request: `new people ${n + 1}/${REQUESTS}`, ...result });
    }
    const cpuUsed = (after: number | undefined, before: number | undefined) =>
      after === undefined || before === undefined ? '?' : `${(after - before).toFixed(1)} s`;
    const cpu =
      `CPU used by the ${REQUESTS} requests: server ${cpuUsed(cpuSecondsOf(server.pid), cpuBefore.server)}, ` +
      `dev database ${cpuUsed(cpuSecondsOf(dbPid), cpuBefore.db)}`;
    rows.push({
      request: 'the first 10,000 again (already subscribed)',
      ...(await importInto('bench-app', 0)),
    });
    rows.push({ request: 'the first 10,000 for a second app', ...(await importInto('bench-app-2', 0)) });
    console.table(rows.map((row) => ({ ...row, seconds: row.seconds.toFixed(2) })));
    console.log(
      `Imported ${REQUESTS * PER_REQUEST} new subscribers in ${total.toFixed(1)} s ` +
        `(${Math.round((REQUESTS * PER_REQUEST) / total)} a second; goal: 100,000 in ≤ 10 s)`,
    );
    console.log(cpu);
  } finally {
    await server.stop();
    await database.stop();
  }
  profile.report('the whole run');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
