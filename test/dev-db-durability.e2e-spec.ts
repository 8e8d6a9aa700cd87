import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { type DevDatabase, startDevDatabase, withDatabaseName } from '../src/database/dev-database';

interface Item {
  _id: string;
  writer: number;
  n: number;
  version: number;
}

const WRITERS = 8;
const PER_WRITER = 60;
const BATCH = 25;

/**
 * The embedded database (`npm start` without MONGODB_URI) answers a write only once it is on disk: every
 * acknowledged insert, update and insertMany is still there after the JVM is killed with SIGKILL, which gives
 * it no chance to flush anything (docs/operations/running-on-mongodb.md).
 */
describe('Dev database durability', () => {
  let dir: string;
  let database: DevDatabase | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'devdb-durability-'));
  });
  afterEach(async () => {
    await database?.stop();
    database = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write after kill -9 of the database process', async () => {
    const file = join(dir, 'mongo.mv');
    database = await startDevDatabase({ file, maxHeap: '256m' });
    const client = await MongoClient.connect(withDatabaseName(database.uri, 'durability'), {
      maxPoolSize: WRITERS,
    });
    const items = client.db().collection<Item>('items');

    // Several connections at once, so writes arrive while others are being committed.
    const expected = new Map<string, number>();
    const writer = async (w: number) => {
      for (let n = 0; n < PER_WRITER; n++) {
        const _id = `${w}-${n}`;
        await items.insertOne({ _id, writer: w, n, version: 1 });
        expected.set(_id, 1);
        if (n % 3 === 0) {
          await items.updateOne({ _id }, { $set: { version: 2 } });
          expected.set(_id, 2);
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    const batch = Array.from({ length: BATCH }, (_, n) => ({ _id: `batch-${n}`, writer: -1, n, version: 1 }));
    await items.insertMany(batch);
    for (const { _id } of batch) expected.set(_id, 1);
    await items.updateOne({ _id: '0-1' }, { $set: { version: 3 } });
    expected.set('0-1', 3);

    // Right after the last acknowledgement: no clean stop, no shutdown hook, nothing flushed on the way out.
    process.kill(database.pid, 'SIGKILL');
    await waitForExit(database.pid);
    await client.close(true);
    database = undefined;

    database = await startDevDatabase({ file, maxHeap: '256m' });
    const reopened = await MongoClient.connect(withDatabaseName(database.uri, 'durability'));
    try {
      const found = new Map(
        (await reopened.db().collection<Item>('items').find().toArray()).map((item) => [
          item._id,
          item.version,
        ]),
      );
      const missing = [...expected].filter(([id, version]) => found.get(id) !== version).map(([id]) => id);
      expect(missing).toEqual([]);
      expect(found.size).toBe(expected.size);
    } finally {
      await reopened.close();
    }
    // Two JVM starts and 700 synced writes: generous, for a machine shared with other jobs.
  }, 120_000);
});

/** Resolves once the process is gone (its /proc entry removed by the reaping parent). */
async function waitForExit(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
