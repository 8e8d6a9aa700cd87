import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, MongoClient } from 'mongodb';
import {
  type DevDatabase,
  type DevDatabaseDurability,
  startDevDatabase,
  withDatabaseName,
} from '../src/database/dev-database';

interface Slot {
  _id: number;
  /** Set while the slot is held, as a job's `lockToken` is: the sparse unique index holds only these. */
  token?: string;
  state: 'free' | 'held';
  turns: number;
}

const SLOTS = 64;
const WRITERS = 16;
const ROUNDS = 8;

/**
 * A database killed (-9) while writes are running must reopen with every index agreeing with the
 * documents. The library changes a document's unique-index entries before the document itself; a commit of
 * the file taken between the two (another connection's commit, or the store's own background writer) left
 * an index entry without its document, or the reverse, and a kill right after kept that on disk. A job whose
 * `lockToken` entry was lost that way could no longer be found by its token: its outcome was never recorded
 * and no reaper could take it (docs/development.md, "The embedded dev database").
 *
 * Each round takes and gives back slots from several connections at once, the way the queue's claims and
 * outcome writes do, kills the database at a moment the test does not choose, starts it on the same file,
 * and compares every token lookup (answered from the index) with the documents (a scan). Both durability
 * modes: `delayed` commits only periodically, so there a commit nearly always lands among running writes
 * (the launcher before the fix failed it in the first round); `commit` also commits after each write.
 */
describe.each<DevDatabaseDurability>(['delayed', 'commit'])(
  'Dev database (%s): a file killed mid-write reopens with its indexes agreeing with its documents',
  (durability) => {
    let dir: string;
    let file: string;
    let database: DevDatabase | undefined;
    let client: MongoClient | undefined;

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'devdb-crash-'));
      file = join(dir, 'crash.mv.db');
    });
    afterAll(async () => {
      await client?.close(true);
      await database?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Starts the database on the file; `slots` is the collection on the new connection. */
    const open = async (): Promise<Collection<Slot>> => {
      database = await startDevDatabase({ file, maxHeap: '256m', durability });
      client = await MongoClient.connect(withDatabaseName(database.uri, 'crash'), {
        maxPoolSize: WRITERS,
        serverSelectionTimeoutMS: 2_000,
      });
      return client.db().collection<Slot>('slots');
    };

    /**
     * Makes the token index and every slot (free) exist. Run after each start: in `delayed` mode a kill loses
     * the writes of the last second, which can be round 0's index and slots (made just before its kill).
     * Without the index the later rounds would compare a scan with a scan; without the slots no writer's
     * update would match and the round would wait for turns forever. Held slots are given back the same way.
     */
    const prepare = async (slots: Collection<Slot>): Promise<void> => {
      await slots.createIndex({ token: 1 }, { unique: true, sparse: true });
      await slots.bulkWrite(
        Array.from({ length: SLOTS }, (_, i) => ({
          updateOne: {
            filter: { _id: i },
            update: { $set: { state: 'free' as const }, $unset: { token: '' }, $setOnInsert: { turns: 0 } },
            upsert: true,
          },
        })),
      );
    };

    let turnsDone = 0;

    /** Takes and gives back slots until the database goes away; resolves with the tokens it ever wrote. */
    const write = async (slots: Collection<Slot>, writer: number, round: number): Promise<string[]> => {
      const written: string[] = [];
      for (let turn = 0; ; turn += 1) {
        const id = (writer + turn * WRITERS) % SLOTS;
        const token = `r${round}w${writer}t${turn}`;
        written.push(token);
        try {
          const taken = await slots.updateOne({ _id: id, state: 'free' }, { $set: { token, state: 'held' } });
          if (taken.modifiedCount === 1) {
            await slots.updateOne(
              { token },
              { $set: { state: 'free' }, $unset: { token: '' }, $inc: { turns: 1 } },
            );
            turnsDone += 1;
          }
        } catch {
          return written;
        }
      }
    };

    /**
     * Every way the index and the documents can disagree, as readable lines. The lookups go out
     * `WRITERS` at a time (one per pooled connection): a round writes thousands of tokens, and one at a
     * time they made the test outlast its limit on a loaded machine.
     */
    const disagreements = async (slots: Collection<Slot>, tokens: string[]): Promise<string[]> => {
      const documents = await slots.find({}).toArray();
      const held = new Map(documents.filter((slot) => slot.token).map((slot) => [slot.token!, slot._id]));
      const found: string[] = [];
      const check = async (token: string) => {
        const byIndex = await slots.findOne({ token });
        const expected = held.get(token);
        if ((byIndex?._id ?? null) !== (expected ?? null) || (byIndex && byIndex.token !== token)) {
          found.push(
            `token ${token}: the index finds ${byIndex?._id ?? 'nothing'}, the documents ${expected ?? 'none'}`,
          );
        }
      };
      for (let start = 0; start < tokens.length; start += WRITERS) {
        await Promise.all(tokens.slice(start, start + WRITERS).map(check));
      }
      return found;
    };

    it('over several kills during concurrent writes', async () => {
      let slots = await open();
      await prepare(slots);

      for (let round = 0; round < ROUNDS; round += 1) {
        let settled = false;
        const writers = Promise.all(
          Array.from({ length: WRITERS }, (_, writer) => write(slots, writer, round)),
        ).finally(() => (settled = true));
        // The kill lands once writes are under way, after a number of them the test does not pick.
        const turnsBefore = turnsDone;
        // Writers that all stopped early (the database gone on its own) end the wait too.
        while (turnsDone < turnsBefore + 50 && !settled)
          await new Promise((resolve) => setTimeout(resolve, 5));
        await new Promise((resolve) => setTimeout(resolve, 50 + 150 * Math.random()));
        process.kill(database!.pid, 'SIGKILL');
        const tokens = (await writers).flat();
        await client!.close(true);

        slots = await open();
        expect({ round, disagreements: await disagreements(slots, tokens) }).toEqual({
          round,
          disagreements: [],
        });
        await prepare(slots);
      }
    }, 300_000);
  },
);
