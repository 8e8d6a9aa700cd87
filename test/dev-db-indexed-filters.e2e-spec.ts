import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, MongoClient } from 'mongodb';
import { type DevDatabase, startDevDatabase, withDatabaseName } from '../src/database/dev-database';

interface Item {
  _id: number;
  // null only in filters: a sparse index holds no document without the field.
  token?: string | null;
  kind: 'a' | 'b';
  applied: string[];
}

const ITEMS: Item[] = Array.from({ length: 40 }, (_, i) => ({
  _id: i,
  // A sparse unique index: every other item has no token.
  ...(i % 2 === 0 ? { token: `t${i}` } : {}),
  kind: i % 3 === 0 ? 'a' : 'b',
  applied: [],
}));

const ids = (items: Item[]) => items.map((item) => item._id);

/**
 * The dev database narrows a filter that names a unique index's keys among other conditions by that index,
 * as MongoDB does, instead of scanning the collection (docs/development.md, "The dev database"). Both
 * storages: in memory (tests) and the file (`npm start`). Each filter's answer is checked against the same
 * filter worked out here, and the scans are read from the database's own count (`{devScanCounts: 1}`).
 */
describe.each([
  ['in memory', false],
  ['in a file', true],
])('Dev database: filters narrowed by a unique index (%s)', (_label, inFile) => {
  let dir: string;
  let database: DevDatabase;
  let client: MongoClient;
  let items: Collection<Item>;

  const scansOfItems = async (): Promise<number> => {
    const reply = await client.db('admin').command({ devScanCounts: 1 });
    return Number((reply.scans as Record<string, number>)['indexed_filters.items'] ?? 0);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'devdb-indexed-'));
    database = await startDevDatabase(inFile ? { file: join(dir, 'mongo.mv'), maxHeap: '256m' } : {});
    client = await MongoClient.connect(withDatabaseName(database.uri, 'indexed_filters'));
    items = client.db().collection<Item>('items');
    await items.createIndex({ token: 1 }, { unique: true, sparse: true });
    await items.insertMany(ITEMS.map((item) => ({ ...item })));
  });
  afterAll(async () => {
    await client?.close();
    await database?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers _id or token plus other conditions without a scan, and right', async () => {
    const before = await scansOfItems();
    expect(ids(await items.find({ _id: 3, kind: 'a' }).toArray())).toEqual([3]);
    expect(ids(await items.find({ _id: 4, kind: 'a' }).toArray())).toEqual([]);
    expect(ids(await items.find({ _id: { $in: [1, 2, 3, 6, 99] }, kind: 'a' }).toArray())).toEqual([3, 6]);
    expect(ids(await items.find({ token: 't6', kind: 'a' }).toArray())).toEqual([6]);
    expect(ids(await items.find({ token: 't6', kind: 'b' }).toArray())).toEqual([]);
    const sorted = await items
      .find({ _id: { $in: [0, 3, 6, 9, 12] }, kind: 'a' })
      .sort({ _id: -1 })
      .limit(2)
      .toArray();
    expect(ids(sorted)).toEqual([12, 9]);
    // The guard of an idempotent update: applied once, refused the second time.
    const guard = { _id: 8, applied: { $ne: 'event-1' } };
    const push = { $push: { applied: 'event-1' } };
    expect((await items.updateOne(guard, push)).modifiedCount).toBe(1);
    expect((await items.updateOne(guard, push)).modifiedCount).toBe(0);
    expect((await items.findOne({ _id: 8 }))?.applied).toEqual(['event-1']);
    expect((await items.deleteOne({ token: 't10', kind: 'a' })).deletedCount).toBe(0);
    expect(await scansOfItems()).toBe(before);
  });

  it('opens a file written before as it was, its filters still narrowed', async () => {
    if (!inFile) return;
    await client.close();
    await database.stop();
    database = await startDevDatabase({ file: join(dir, 'mongo.mv'), maxHeap: '256m' });
    client = await MongoClient.connect(withDatabaseName(database.uri, 'indexed_filters'));
    items = client.db().collection<Item>('items');
    expect(await items.countDocuments({})).toBe(ITEMS.length);
    const before = await scansOfItems();
    expect((await items.findOne({ _id: 8 }))?.applied).toEqual(['event-1']);
    expect(ids(await items.find({ token: 't6', kind: 'a' }).toArray())).toEqual([6]);
    expect(await scansOfItems()).toBe(before);
  });

  it('still scans, and answers right, where no unique index narrows the filter', async () => {
    const before = await scansOfItems();
    const untokened = ITEMS.filter((item) => item.token === undefined && item.kind === 'a');
    // A sparse index does not hold the documents without the field: it cannot answer these.
    expect(ids(await items.find({ token: null, kind: 'a' }).toArray())).toEqual(ids(untokened));
    expect(ids(await items.find({ token: { $exists: false }, kind: 'a' }).toArray())).toEqual(ids(untokened));
    expect(ids(await items.find({ _id: { $gt: 36 }, kind: 'a' }).toArray())).toEqual([39]);
    expect(await scansOfItems()).toBe(before + 3);
  });
});
