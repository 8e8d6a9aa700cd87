/**
 * Dev database footprint: does the embedded database (the JVM running mongo-java-server on an H2 file, as
 * `npm start` launches it without MONGODB_URI, DEV_DATABASE_MAX_HEAP included) keep its memory and its file
 * proportional to the data it holds?
 *
 *   npm run bench -- dev-db-footprint
 *   BENCH_LOAD_S=480 BENCH_IDLE_S=120 npm run bench -- dev-db-footprint
 *       (longer load and idle; defaults 180 s and 90 s)
 *   BENCH_LIVE_DOCS=40000 npm run bench -- dev-db-footprint               (a larger live set; default 20,000)
 *
 * A mixed load through the MongoDB driver, shaped like the service's writes: documents of about 3 KB (a
 * contact with a note and a short history) under a unique index, each loop inserting one, updating two
 * ($set plus a capped $push) and, once BENCH_LIVE_DOCS are live, deleting the oldest; so the data stays
 * the same size while the writes go on. Every 15 s (then every 10 s of idle) it prints the JVM's resident
 * memory (VmRSS) and the H2 file's size beside the live data; the summary gives the peak and the figures
 * after the idle period. Then three quarters of the documents are deleted and, after 40 s of idle, the file
 * should have shrunk with them. Memory and file that keep growing while the data does not are the defect.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, MongoClient } from 'mongodb';
import { DatabaseEnv } from '../src/database/database.config';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';

const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 180);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 90);
/** After the idle period three quarters of the documents are deleted; then this long of idle again. */
const SHRINK_WAIT_S = 40;
const LIVE_DOCS = Number(process.env.BENCH_LIVE_DOCS ?? 20_000);
const CONCURRENCY = 8;
const LOAD_SAMPLE_MS = 15_000;
const IDLE_SAMPLE_MS = 10_000;
const MB = 1024 * 1024;

interface Contact {
  _id: number;
  appId: string;
  email: string;
  name: string;
  status: 'subscribed' | 'unsubscribed';
  tags: string[];
  note: string;
  history: { at: Date; action: string; source: string }[];
  createdAt: Date;
  updatedAt: Date;
}

/** About 3 KB of BSON, mostly text that compresses like real notes do (words, not random bytes). */
function contact(id: number): Contact {
  const words = ['order', 'shipping', 'refund', 'newsletter', 'account', 'login', 'invoice', 'question'];
  const note = Array.from({ length: 420 }, (_, i) => words[(id * 7 + i * 3) % words.length]).join(' ');
  const now = new Date();
  return {
    _id: id,
    appId: `app-${id % 4}`,
    email: `contact-${id}-${randomBytes(3).toString('hex')}@example.com`,
    name: `Contact ${id}`,
    status: 'subscribed',
    tags: ['demo', `cohort-${id % 12}`],
    note,
    history: [{ at: now, action: 'subscribed', source: 'joinlist' }],
    createdAt: now,
    updatedAt: now,
  };
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** The H2 file, plus its temporary companion while H2 rewrites it (a `.tempFile` during a compaction). */
function fileBytes(file: string): number {
  return [file, `${file}.tempFile`].reduce(
    (sum, path) => sum + (existsSync(path) ? statSync(path).size : 0),
    0,
  );
}

interface Load {
  nextId: number;
  ops: number;
  stop: boolean;
}

async function worker(contacts: Collection<Contact>, load: Load): Promise<void> {
  while (!load.stop) {
    const id = load.nextId++;
    await contacts.insertOne(contact(id));
    const oldest = Math.max(0, load.nextId - LIVE_DOCS);
    for (let i = 0; i < 2; i++) {
      const target = oldest + Math.floor(Math.random() * (load.nextId - oldest));
      await contacts.updateOne(
        { _id: target },
        {
          $set: { status: i ? 'unsubscribed' : 'subscribed', updatedAt: new Date() },
          $push: { history: { $each: [{ at: new Date(), action: 'updated', source: 'api' }], $slice: -10 } },
        },
      );
    }
    if (id >= LIVE_DOCS) await contacts.deleteOne({ _id: id - LIVE_DOCS });
    load.ops += id >= LIVE_DOCS ? 4 : 3;
  }
}

function line(label: string, pid: number, file: string, liveDocs: number, dataBytes: number): number {
  const rss = rssBytes(pid);
  const size = fileBytes(file);
  console.log(
    `${label.padEnd(12)} RSS ${(rss / MB).toFixed(0).padStart(5)} MB   file ${(size / MB).toFixed(0).padStart(5)} MB` +
      `   live documents ${String(liveDocs).padStart(6)} (${(dataBytes / MB).toFixed(0)} MB of BSON)`,
  );
  return rss;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'devdb-footprint-'));
  const file = join(dir, 'mongo.mv');
  // The heap limit the service gives it (DEV_DATABASE_MAX_HEAP, or the configuration's default).
  const maxHeap = process.env.DEV_DATABASE_MAX_HEAP ?? new DatabaseEnv().DEV_DATABASE_MAX_HEAP;
  const database = await startDevDatabase({ file, maxHeap });
  const pid = database.pid;
  console.log(`JVM: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`);
  const client = await MongoClient.connect(withDatabaseName(database.uri, 'bench_devdb'));
  const contacts = client.db().collection<Contact>('contacts');
  await contacts.createIndex({ email: 1 }, { unique: true });
  await contacts.createIndex({ appId: 1, createdAt: -1 });
  const docBytes = JSON.stringify(contact(1)).length;

  const load: Load = { nextId: 0, ops: 0, stop: false };
  const liveDocs = () => Math.min(load.nextId, LIVE_DOCS);
  const started = Date.now();
  let peakRss = 0;
  let peakFile = 0;
  const sampler = setInterval(() => {
    const label = `load ${Math.round((Date.now() - started) / 1000)}s`;
    peakRss = Math.max(peakRss, line(label, pid, file, liveDocs(), liveDocs() * docBytes));
    peakFile = Math.max(peakFile, fileBytes(file));
  }, LOAD_SAMPLE_MS);
  const workers = Array.from({ length: CONCURRENCY }, () => worker(contacts, load));
  await new Promise((done) => setTimeout(done, LOAD_S * 1000));
  load.stop = true;
  await Promise.all(workers);
  clearInterval(sampler);
  const loadSeconds = (Date.now() - started) / 1000;
  const endRss = line('end of load', pid, file, liveDocs(), liveDocs() * docBytes);
  const endFile = fileBytes(file);

  for (let waited = 0; waited < IDLE_S * 1000; waited += IDLE_SAMPLE_MS) {
    await new Promise((done) => setTimeout(done, IDLE_SAMPLE_MS));
    line(`idle ${(waited + IDLE_SAMPLE_MS) / 1000}s`, pid, file, liveDocs(), liveDocs() * docBytes);
  }
  const idleRss = rssBytes(pid);
  const idleFile = fileBytes(file);
  const dataMb = (liveDocs() * docBytes) / MB;
  console.log(
    `\n${load.ops} writes in ${loadSeconds.toFixed(0)} s (${(load.ops / loadSeconds).toFixed(0)}/s), ` +
      `${load.nextId} documents inserted, ${liveDocs()} live (${dataMb.toFixed(0)} MB of BSON)`,
  );
  console.log(
    `RSS:  peak ${(Math.max(peakRss, endRss) / MB).toFixed(0)} MB, end of load ${(endRss / MB).toFixed(0)} MB, ` +
      `after ${IDLE_S} s idle ${(idleRss / MB).toFixed(0)} MB`,
  );
  console.log(
    `file: peak ${(Math.max(peakFile, endFile) / MB).toFixed(0)} MB, end of load ${(endFile / MB).toFixed(0)} MB, ` +
      `after ${IDLE_S} s idle ${(idleFile / MB).toFixed(0)} MB (${(idleFile / MB / dataMb).toFixed(1)}× the live data)`,
  );

  // Most of the data goes away (a cleanup, a retention sweep): the file should follow it down.
  const kept = Math.floor(LIVE_DOCS / 4);
  await contacts.deleteMany({ _id: { $lt: load.nextId - kept } });
  const keptBytes = kept * docBytes;
  for (let waited = 0; waited < SHRINK_WAIT_S * 1000; waited += IDLE_SAMPLE_MS) {
    await new Promise((done) => setTimeout(done, IDLE_SAMPLE_MS));
    line(`deleted +${(waited + IDLE_SAMPLE_MS) / 1000}s`, pid, file, kept, keptBytes);
  }
  const shrunk = fileBytes(file);
  console.log(
    `after deleting all but ${kept} documents and ${SHRINK_WAIT_S} s idle: file ${(shrunk / MB).toFixed(0)} MB ` +
      `(${(shrunk / keptBytes).toFixed(1)}× the live data), RSS ${(rssBytes(pid) / MB).toFixed(0)} MB`,
  );

  await client.close();
  await database.stop();
  console.log(`file after a clean stop: ${(fileBytes(file) / MB).toFixed(0)} MB`);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
