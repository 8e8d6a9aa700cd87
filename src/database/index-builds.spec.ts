import { type Db, type Document, MongoNetworkTimeoutError } from 'mongodb';
import { type BuildWatch, buildMissing, describeBuild, indexBuildsOf, waitUntilBuilt } from './index-builds';

/**
 * `$currentOp` answers as MongoDB 7 gives them while `createIndexes` builds `email_1` on `shop.tickets`: the
 * client's command, and the server's build thread with its progress (the form of the "Active Indexing
 * Operations" example in MongoDB's manual).
 */
const clientOp = (secs: number): Document => ({
  type: 'op',
  desc: 'conn42',
  active: true,
  opid: 1042,
  secs_running: secs,
  op: 'command',
  ns: 'shop.tickets',
  command: {
    createIndexes: 'tickets',
    indexes: [{ key: { email: 1, createdAt: 1, _id: 1 }, name: 'email_1_createdAt_1__id_1' }],
    $db: 'shop',
  },
  msg: null,
});
const buildThread = (done: number, total: number, secs: number): Document => ({
  type: 'op',
  desc: 'IndexBuildsCoordinatorMongod-3',
  active: true,
  opid: 1043,
  secs_running: secs,
  op: 'command',
  ns: 'shop.tickets',
  command: {
    createIndexes: 'tickets',
    indexes: [{ key: { email: 1, createdAt: 1, _id: 1 }, name: 'email_1_createdAt_1__id_1' }],
    $db: 'shop',
  },
  msg: `Index Build: scanning collection Index Build: scanning collection: ${done}/${total} ${Math.floor(
    (done / total) * 100,
  )}%`,
  progress: { done, total },
});
const otherDatabase: Document = {
  ...clientOp(3),
  ns: 'other.tickets',
  command: { createIndexes: 'tickets' },
};

const EMAIL_INDEX = { key: { email: 1, createdAt: 1, _id: 1 }, options: {} };
const NAME = 'email_1_createdAt_1__id_1';

/** A server replayed from recorded answers: one `$currentOp` answer and one index listing per poll. */
function recordedWatch(answers: Document[][], listings: string[][]) {
  const printed: string[] = [];
  let poll = 0;
  let listing = 0;
  const watch: BuildWatch = {
    intervalMs: 1_000,
    print: (line) => printed.push(line),
    builds: () => Promise.resolve(indexBuildsOf(answers[Math.min(poll++, answers.length - 1)], 'shop')),
    listed: () => Promise.resolve(new Set(listings[Math.min(listing++, listings.length - 1)])),
    sleep: () => Promise.resolve(),
  };
  return { watch, printed };
}

describe('index builds seen through $currentOp', () => {
  it('reads one build per collection and index set, with the build thread’s progress', () => {
    const builds = indexBuildsOf([clientOp(12), buildThread(41_000, 100_000, 12), otherDatabase], 'shop');
    expect(builds).toEqual([
      {
        collection: 'tickets',
        indexes: [NAME],
        message: expect.stringContaining('scanning collection') as string,
        done: 41_000,
        total: 100_000,
        seconds: 12,
      },
    ]);
    expect(describeBuild(builds[0])).toBe(`tickets ${NAME}: Index Build: scanning collection (41%, 12 s)`);
  });

  it('waits for a build already under way, printing its progress until the index is listed', async () => {
    const { watch, printed } = recordedWatch(
      [
        [clientOp(5), buildThread(10, 100, 5)],
        [clientOp(9), buildThread(60, 100, 9)],
      ],
      [['_id_'], ['_id_'], ['_id_', NAME]],
    );
    await expect(waitUntilBuilt('tickets', [NAME], watch)).resolves.toBe(true);
    expect(printed).toEqual([
      `    tickets ${NAME}: Index Build: scanning collection (10%, 5 s)`,
      `    tickets ${NAME}: Index Build: scanning collection (60%, 9 s)`,
    ]);
  });

  it('reports a build that ended without its index (failed or killed), so it is started again', async () => {
    const { watch } = recordedWatch([[]], [['_id_']]);
    await expect(waitUntilBuilt('tickets', [NAME], watch)).resolves.toBe(false);
  });

  it('does not start an index the server is already building: it waits for it instead', async () => {
    const command = jest.fn();
    const db = { command } as unknown as Db;
    const { watch, printed } = recordedWatch(
      [[clientOp(30), buildThread(90, 100, 30)], [clientOp(31), buildThread(99, 100, 31)], []],
      [['_id_'], ['_id_'], ['_id_', NAME]],
    );
    await buildMissing(db, 'tickets', [EMAIL_INDEX], watch);
    expect(command).not.toHaveBeenCalled();
    expect(printed[0]).toBe(`  tickets: ${NAME} already being built (an earlier run?): waiting for it`);
  });

  it('outlives a socket timeout: the build goes on on the server and the run waits for it', async () => {
    const command = jest.fn(() => Promise.reject(new MongoNetworkTimeoutError('connection 3 timed out')));
    const db = { command } as unknown as Db;
    const { watch, printed } = recordedWatch(
      // Nothing before the command starts; then the server's build, then the listed index.
      [[], [clientOp(61), buildThread(70, 100, 61)]],
      [['_id_'], ['_id_', NAME]],
    );
    await buildMissing(db, 'tickets', [EMAIL_INDEX], watch);
    expect(command).toHaveBeenCalledWith({
      createIndexes: 'tickets',
      indexes: [{ key: EMAIL_INDEX.key, name: NAME }],
    });
    expect(printed).toEqual([
      `  tickets: building ${NAME}`,
      '  tickets: the connection was lost (connection 3 timed out); the build goes on',
      `    tickets ${NAME}: Index Build: scanning collection (70%, 61 s)`,
    ]);
  });

  it('fails a build the server refused (not a lost connection)', async () => {
    const refusal = Object.assign(new Error('Index build failed: E11000'), { code: 11000 });
    const db = { command: jest.fn(() => Promise.reject(refusal)) } as unknown as Db;
    const { watch } = recordedWatch([[]], [['_id_']]);
    await expect(buildMissing(db, 'tickets', [EMAIL_INDEX], watch)).rejects.toBe(refusal);
  });
});
