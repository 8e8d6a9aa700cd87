/**
 * Dev database writes per second: what answering each write only once it is on disk costs the embedded
 * database.
 *
 *   npm run bench -- dev-db-writes
 *   BENCH_SECONDS=20 npm run bench -- dev-db-writes          (longer runs per cell; default 10 s)
 *   BENCH_WRITERS=1,8,32 npm run bench -- dev-db-writes      (concurrent writers per cell; default 1,8,32)
 *
 * Starts the launcher on a fresh H2 file in each durability mode (`commit`, the default, and `delayed`,
 * which is `DEV_DATABASE_DURABILITY=delayed` and what the launcher did before commits were made durable) and
 * runs, for each number of concurrent writers, a loop of an insert of a 1 KB document followed by an update
 * of it ($set), each acknowledged, through the MongoDB driver with one connection per writer. Prints
 * acknowledged writes per second, the mean latency of one write, and the JVM's CPU time per write (the
 * figure that depends least on what else the machine runs) per cell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, MongoClient } from 'mongodb';
import { type DevDatabaseDurability, startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { cpuSecondsOf } from './process-cpu';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WRITERS = (process.env.BENCH_WRITERS ?? '1,8,32').split(',').map(Number);
const MODES: DevDatabaseDurability[] = ['commit', 'delayed'];

interface Doc {
  _id: number;
  writer: number;
  body: string;
  version: number;
}

async function load(items: Collection<Doc>, writers: number): Promise<{ writes: number; seconds: number }> {
  let next = 0;
  let writes = 0;
  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  const body = 'lorem ipsum dolor sit amet '.repeat(38);
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      while (Date.now() < deadline) {
        const _id = next++;
        await items.insertOne({ _id, writer, body, version: 1 });
        await items.updateOne({ _id }, { $set: { version: 2 } });
        writes += 2;
      }
    }),
  );
  return { writes, seconds: (Date.now() - started) / 1000 };
}

interface Running {
  durability: DevDatabaseDurability;
  uri: string;
  pid: number;
  stop(): Promise<void>;
}

async function launch(durability: DevDatabaseDurability): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'devdb-writes-'));
  const database = await startDevDatabase({ file: join(dir, 'mongo.mv'), maxHeap: '512m', durability });
  return {
    durability,
    uri: database.uri,
    pid: database.pid,
    async stop() {
      await database.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function cell(database: Running, writers: number): Promise<string> {
  const client = await MongoClient.connect(withDatabaseName(database.uri, 'bench_writes'), {
    maxPoolSize: writers,
  });
  try {
    const cpuBefore = cpuSecondsOf(database.pid) ?? 0;
    const { writes, seconds } = await load(client.db().collection<Doc>(`items_${writers}`), writers);
    const cpuMs = (((cpuSecondsOf(database.pid) ?? 0) - cpuBefore) * 1000) / writes;
    const perSecond = writes / seconds;
    return (
      `| ${database.durability.padEnd(10)} | ${String(writers).padStart(7)} | ` +
      `${perSecond.toFixed(0).padStart(8)} | ${((writers / perSecond) * 1000).toFixed(2).padStart(10)} | ` +
      `${cpuMs.toFixed(2).padStart(14)} |`
    );
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  console.log(`${SECONDS} s per cell; an insert then an update per loop, each acknowledged`);
  // Both launchers run side by side and the cells alternate, so a change in the machine's load meets both.
  const databases = await Promise.all(MODES.map(launch));
  const header =
    '| durability | writers | writes/s | ms / write | JVM CPU ms / write |\n|---|--:|--:|--:|--:|';
  console.log(header);
  try {
    for (const writers of WRITERS) {
      for (const database of databases) console.log(await cell(database, writers));
    }
  } finally {
    await Promise.all(databases.map((database) => database.stop()));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
