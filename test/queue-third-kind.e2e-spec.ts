import { getModelToken } from '@nestjs/mongoose';
import { type Model, trusted } from 'mongoose';
import { LEASE_FIELDS } from '../src/queue/lease-fields';
import { WorkerHeartbeat } from '../src/queue/worker-heartbeat';
import type { CommandSucceededEvent } from 'mongodb';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { monitorDatabaseCommands } from './helpers/db-commands';
import { MongoFaultProxy } from './helpers/mongo-fault-proxy';
import { waitFor } from './helpers/wait';
import { ObjectId } from 'mongodb';
import { kindTokens } from '../src/queue/kind-runtime';
import { QueueModule } from '../src/queue/queue.module';
import type { LeaseQueueStore, Reaped } from '../src/queue/lease-queue.store';
import type { PollingWorker } from '../src/queue/polling-worker';
import {
  THUMBNAIL_KIND,
  Thumbnail,
  ThumbnailHandler,
  ORPHAN_KIND,
  ThumbnailKindModule,
  type ThumbnailTypes,
} from './queue-kind/thumbnail-kind';

/**
 * The engine with a kind that is neither e-mail nor chat (test/queue-kind/thumbnail-kind.ts): its own
 * collection, status names and retry policy, declared in one object; the engine's retries, permanent
 * errors and lapse recovery apply to it unchanged. The service reaches the database through a
 * wire-protocol proxy, so a test can lose the answer of one command.
 */
describe('A third job kind on the lease-queue engine', () => {
  const databaseUri = process.env.MONGODB_URI!;
  let proxy: MongoFaultProxy;
  /** Set: the next update of the thumbnails reaches the database and its answer is lost. */
  let loseNextUpdateAnswer = false;
  let t: TestApp;
  const thumbnails = () => t.app.get<Model<Thumbnail>>(getModelToken(Thumbnail.name));
  const byId = (id: string) => thumbnails().findById(id).lean<Thumbnail>().orFail().exec();
  // The store and worker the queue module made from the declaration alone.
  const storeOf = () => t.app.get<LeaseQueueStore<ThumbnailTypes>>(kindTokens(THUMBNAIL_KIND).store);
  const worker = () => t.app.get<PollingWorker<ThumbnailTypes>>(kindTokens(THUMBNAIL_KIND).worker);
  /** Queues a thumbnail, due now, as a feature's producer would. */
  async function add(payload: Thumbnail['payload']): Promise<string> {
    const _id = new ObjectId();
    await thumbnails().create({ _id, ...storeOf().newJobFields(_id), runAt: new Date(), payload });
    return String(_id);
  }

  beforeAll(async () => {
    monitorDatabaseCommands();
    proxy = await MongoFaultProxy.start(databaseUri, {
      onCommand: (command) => {
        if (!loseNextUpdateAnswer || command.name !== 'update' || command.collection !== 'test_thumbnails') {
          return undefined;
        }
        loseNextUpdateAnswer = false;
        return { kind: 'cut-after' };
      },
    });
    process.env.MONGODB_URI = proxy.uriFor(databaseUri);
    t = await createTestApp({ imports: [ThumbnailKindModule] });
    await resetDatabase(t.connection);
  });
  afterAll(async () => {
    await t.app.get(WorkerHeartbeat).stop();
    await t.close();
    await proxy.close();
    process.env.MONGODB_URI = databaseUri;
  });

  /** Runs the worker until no thumbnail is waiting (a retry's backoff is 1 ms). */
  async function drain(): Promise<void> {
    for (let run = 0; run < 20; run += 1) {
      await worker().processDue();
      const open = await thumbnails().countDocuments({
        status: trusted({ $in: ['queued', 'again', 'rendering'] }),
      });
      if (open === 0) return;
    }
    throw new Error('Thumbnails still waiting after 20 runs');
  }

  it('retries a transient error, then succeeds; a permanent error ends it at once', async () => {
    const ok = await add({ path: '/a.png', script: 'ok' });
    const flaky = await add({ path: '/flaky.png', script: 'flaky' });
    const refused = await add({ path: '/notes.txt', script: 'refused' });

    // One run: the flaky one fails, is due again 1 ms later and succeeds in the run's next scan.
    const first = await worker().processDue();
    expect(first).toMatchObject({ failed: 1, dead: 1 });
    await drain();

    expect(await byId(ok)).toMatchObject({ status: 'ready', attempts: 1, size: 6 });
    expect(await byId(flaky)).toMatchObject({ status: 'ready', attempts: 2, size: 10 });
    expect(await byId(refused)).toMatchObject({
      status: 'broken',
      attempts: 1,
      lastError: '/notes.txt: not an image',
    });
    const calls = t.app.get(ThumbnailHandler).calls;
    expect(Object.fromEntries(calls)).toEqual({ '/a.png': 1, '/flaky.png': 2, '/notes.txt': 1 });
    // Ended jobs carry no lease field, and the kind's end fields.
    const raw = await t.connection.collection('test_thumbnails').findOne({ size: 6 });
    expect(raw).toHaveProperty('finishedAt');
    for (const field of LEASE_FIELDS) expect(raw).not.toHaveProperty(field);
  });

  it('re-claims once the job of a worker killed mid-job, and runs it exactly once more', async () => {
    const store = storeOf();
    const id = await add({ path: '/killed.png', script: 'ok' });
    // A worker of another process claimed it with a short lease and was killed (no heartbeat of it left).
    const scan = store.scanDue(10);
    const due = await scan.next();
    await scan.close();
    const claimed = await store.claimMany(
      due,
      (job) => `killed.${String(job._id)}`,
      1,
      new Date(),
      'killed-host:7:t',
    );
    expect(claimed).toHaveLength(1);
    expect(await byId(id)).toMatchObject({ status: 'rendering', attempts: 1 });

    // The reaper finds it (its lease lapsed, its holder is gone): due again, under the kind's own status.
    const reaped = await store.reapLapsed(new Date());
    expect(reaped.map(({ rule }) => rule.to)).toEqual(['due']);
    expect(await byId(id)).toMatchObject({ status: 'again', attempts: 1 });
    // This worker runs it, once.
    const run = await worker().processDue();
    expect(run).toMatchObject({ ready: 1 });
    expect(await byId(id)).toMatchObject({ status: 'ready', attempts: 2, lastError: 'Its worker stopped' });
    const again = await worker().processDue();
    expect(again).toMatchObject({ reaped: 0, ready: 0 });
    expect(t.app.get(ThumbnailHandler).calls.get('/killed.png')).toBe(1);
  });

  it('reads only the jobs of lapsed holders and lapsed leases, not every held job', async () => {
    const store = storeOf();
    await thumbnails().deleteMany({});
    const now = Date.now();
    await t.connection
      .collection<{ _id: string; aliveUntil: Date }>('queue_workers')
      .insertOne({ _id: 'busy-host:8:u', aliveUntil: new Date(now + 600_000) });
    for (let i = 0; i < 30; i += 1) await add({ path: `/held-${i}.png`, script: 'ok' });
    const lapsed = await add({ path: '/lapsed.png', script: 'ok' });
    const scan = store.scanDue(50);
    const due = await scan.next();
    await scan.close();
    // 30 held by a live process with a long lease, one by a process without a heartbeat whose lease lapsed.
    const lapsedDue = due.filter((job) => String(job._id) === lapsed);
    const liveDue = due.filter((job) => String(job._id) !== lapsed);
    await store.claimMany(liveDue, (job) => `busy.${String(job._id)}`, 600_000, new Date(), 'busy-host:8:u');
    await store.claimMany(lapsedDue, (job) => `gone.${String(job._id)}`, 1, new Date(), 'gone-host:9:v');

    const read = await documentsReadFrom('test_thumbnails', () =>
      store.reapLapsed(new Date(), t.app.get(WorkerHeartbeat)),
    );
    expect(read).toBe(1);
    expect(await byId(lapsed)).toMatchObject({ status: 'again' });
    expect(await thumbnails().countDocuments({ status: 'rendering' })).toBe(30);
  });

  it('a claim applied whose answer was lost: its own live worker releases it once the lease lapses, and runs it once', async () => {
    const heartbeat = t.app.get(WorkerHeartbeat);
    heartbeat.start();
    const workers = t.connection.collection<{ _id: string }>('queue_workers');
    await waitFor(async () => (await workers.countDocuments({ _id: heartbeat.id })) === 1, {
      describe: () => 'the heartbeat was never written',
    });
    await thumbnails().deleteMany({});
    const id = await add({ path: '/lost.png', script: 'ok' });

    // The claim reaches the database, which applies it; the connection closes before its answer.
    loseNextUpdateAnswer = true;
    await expect(worker().processDue()).rejects.toThrow();
    expect(loseNextUpdateAnswer).toBe(false);
    const orphan = await byId(id);
    expect(orphan).toMatchObject({ status: 'rendering', attempts: 1, workerId: heartbeat.id });
    const leaseEnd = (orphan as Thumbnail & { leaseExpiresAt: Date }).leaseExpiresAt.getTime();

    // Another process's reaper leaves it once its lease lapsed: its holder's heartbeat is fresh (judged now).
    const fresh = {
      lapsed: () => heartbeat.lapsed(new Date()),
      holders: (ids: string[]) => heartbeat.holders(ids),
    };
    expect(await storeOf().reapLapsed(new Date(leaseEnd + 1), fresh)).toEqual([]);
    // Its holder, which never learned it held it, gives it back once the lease lapses (1 s), not before,
    // with the attempt not counted.
    expect(await worker().reapLapsed(new Date(leaseEnd - 1))).toEqual([]);
    let reaped: Reaped[] = [];
    await waitFor(async () => (reaped = await worker().reapLapsed()).length > 0, {
      describe: () => 'the orphan was never released',
    });
    expect(Date.now()).toBeGreaterThanOrEqual(leaseEnd);
    expect(reaped).toMatchObject([{ rule: { to: 'pending', uncount: true }, orphan: true }]);
    expect(await byId(id)).toMatchObject({ status: 'queued', attempts: 0 });

    expect(await worker().processDue()).toMatchObject({ ready: 1 });
    expect(await byId(id)).toMatchObject({ status: 'ready', attempts: 1 });
    expect(t.app.get(ThumbnailHandler).calls.get('/lost.png')).toBe(1);
  });

  it('never releases a job its own worker is still working on, however old the lease', async () => {
    const handler = t.app.get(ThumbnailHandler);
    let open = () => undefined as void;
    handler.gate = new Promise<void>((resolve) => (open = resolve));
    const id = await add({ path: '/slow.png', script: 'slow' });
    const run = worker().processDue();
    await waitFor(() => handler.calls.get('/slow.png') === 1, {
      describe: () => 'the slow job never started',
    });

    expect(await worker().reapLapsed(new Date(Date.now() + 24 * 3_600_000))).toEqual([]);
    expect(await byId(id)).toMatchObject({ status: 'rendering', attempts: 1 });
    open();
    expect(await run).toMatchObject({ ready: 1 });
    expect(await byId(id)).toMatchObject({ status: 'ready', attempts: 1 });
  });

  it('refuses to boot a kind whose declared job type has no handler, in one line', async () => {
    const boot = createTestApp({ imports: [QueueModule.forKind(ORPHAN_KIND)] });
    await expect(boot).rejects.toThrow(/^Queue "orphan": no @JobHandler for job type\(s\) orphan\.run$/);
  });

  /** How many documents the finds on `collection` returned while `work` ran. */
  async function documentsReadFrom(collection: string, work: () => Promise<unknown>): Promise<number> {
    const client = t.connection.getClient();
    let read = 0;
    const listener = (event: CommandSucceededEvent) => {
      const reply = event.reply as { cursor?: { ns?: string; firstBatch?: unknown[] } };
      if (event.commandName === 'find' && reply.cursor?.ns?.endsWith(`.${collection}`)) {
        read += reply.cursor.firstBatch?.length ?? 0;
      }
    };
    client.on('commandSucceeded', listener);
    try {
      await work();
    } finally {
      client.off('commandSucceeded', listener);
    }
    return read;
  }
});
