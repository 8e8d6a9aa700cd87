import type { AnyBulkWriteOperation, Db, Document, ObjectId } from 'mongodb';
import { writeAll } from '../../common/database/bulk-writes';
import { retryTransient } from '../../common/database/transient-retry';

/**
 * A one-time rewrite of stored documents that a new release needs (a field normalised, a date added), run
 * by `npm run db:indexes` after the indexes. It walks its collection in `_id` order a batch at a time and
 * keeps its place in `data_migrations`, so a run that is stopped resumes where it was; each document's
 * change is guarded by the value it replaces, so a batch done twice changes nothing the second time.
 */
export interface DataMigration {
  name: string;
  /** One line for the operator. */
  description: string;
  collection: string;
  /** The fields `change` reads. */
  projection: Document;
  /** The update of one document, or null when it needs none. */
  change(doc: Document): AnyBulkWriteOperation<Document> | null;
}

/** The state of one migration: where it is, what it did. */
interface MigrationState {
  _id: string;
  after?: ObjectId;
  read: number;
  changed: number;
  completedAt?: Date;
}

export const MIGRATIONS_COLLECTION = 'data_migrations';
const BATCH = 1_000;

/** The migrations not finished yet, by name. */
export async function pendingMigrations(db: Db, migrations: DataMigration[]): Promise<DataMigration[]> {
  const states = db.collection<MigrationState>(MIGRATIONS_COLLECTION);
  const done = await states.find({ _id: { $in: migrations.map((migration) => migration.name) } }).toArray();
  const finished = new Set(done.filter((state) => state.completedAt).map((state) => state._id));
  return migrations.filter((migration) => !finished.has(migration.name));
}

/** Runs one migration from where it stopped, printing its progress after each batch. */
export async function runMigration(
  db: Db,
  migration: DataMigration,
  print: (line: string) => void,
): Promise<MigrationState> {
  const states = db.collection<MigrationState>(MIGRATIONS_COLLECTION);
  let state: MigrationState = (await states.findOne({ _id: migration.name })) ?? {
    _id: migration.name,
    read: 0,
    changed: 0,
  };
  const collection = db.collection(migration.collection);
  for (;;) {
    const after = state.after;
    const docs = await retryTransient(() =>
      collection
        .find(after ? { _id: { $gt: after } } : {}, {
          projection: migration.projection,
          sort: { _id: 1 },
          limit: BATCH,
        })
        .toArray(),
    );
    const operations = docs.flatMap((doc) => migration.change(doc) ?? []);
    if (operations.length) {
      // Each operation is guarded by the value it replaces: sent again, it changes nothing.
      await retryTransient(() => writeAll(collection, operations));
    }
    const last = docs[docs.length - 1];
    state = {
      ...state,
      ...(last ? { after: last._id } : {}),
      read: state.read + docs.length,
      changed: state.changed + operations.length,
      ...(docs.length < BATCH ? { completedAt: new Date() } : {}),
    };
    const { _id, ...fields } = state;
    await retryTransient(() => states.updateOne({ _id }, { $set: fields }, { upsert: true }));
    print(
      `  ${migration.name}: ${state.read} read, ${state.changed} changed${state.completedAt ? ', done' : ''}`,
    );
    if (state.completedAt) return state;
  }
}
