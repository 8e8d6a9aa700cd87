import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { type DevDatabase, startDevDatabase } from '../src/database/dev-database';

const ROUNDS = 20;
const INDEXES = 30;

/**
 * An index created while other connections read and write the collection, as at a service's first start
 * (Mongoose builds the indexes of `users` while the admin bootstrap reads it). The library walked the
 * collection's index list while the creation added to it, and the reader got "Unknown error: null" (a
 * ConcurrentModificationException). Both storages (docs/development.md, "The embedded dev database").
 */
describe.each([
  ['in memory', false],
  ['in a file', true],
])('Dev database: indexes created beside reads and writes (%s)', (_label, inFile) => {
  let dir: string;
  let database: DevDatabase;
  let client: MongoClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dev-db-indexes-'));
    database = await startDevDatabase(inFile ? { file: join(dir, 'mongo.mv') } : {});
    client = await new MongoClient(database.uri, { maxPoolSize: 40 }).connect();
  });
  afterAll(async () => {
    await client?.close();
    await database?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every command', async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const users = client.db(`round${round}`).collection('users');
      await users.insertOne({ email: 'first@example.com', role: 'admin' });
      const commands: Promise<unknown>[] = [];
      for (let i = 0; i < INDEXES; i += 1) {
        commands.push(users.createIndex({ [`field${i}`]: 1 }, { unique: true, sparse: true }));
        commands.push(users.findOne({ role: 'admin', isActive: true }));
        commands.push(users.insertOne({ email: `user${i}@example.com` }));
      }
      for (const result of await Promise.allSettled(commands)) {
        if (result.status === 'rejected') failures.push(`round ${round}: ${String(result.reason)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await client.db('round0').collection('users').countDocuments()).toBe(INDEXES + 1);
  });
});
