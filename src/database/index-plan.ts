import type { IndexDirection } from 'mongodb';
import type { Connection } from 'mongoose';
import { type BuildWatch, buildMissing } from './index-builds';

/** Index options that change what an index does; two indexes on the same keys must agree on these. */
const COMPARED_OPTIONS = [
  'unique',
  'sparse',
  'expireAfterSeconds',
  'partialFilterExpression',
  'collation',
] as const;

type KeySpec = Record<string, IndexDirection>;
type Options = Record<string, unknown>;

export interface DeclaredIndex {
  key: KeySpec;
  options: Options;
}

export interface ExistingIndex {
  name: string;
  key: KeySpec;
  options: Options;
}

export interface IndexConflict {
  collection: string;
  /** The existing index's name. */
  name: string;
  key: KeySpec;
  declared: Options;
  existing: Options;
}

export interface CollectionPlan {
  collection: string;
  missing: DeclaredIndex[];
  extra: ExistingIndex[];
  conflicts: IndexConflict[];
}

const keyId = (key: KeySpec) => JSON.stringify(Object.entries(key));

/** The options that matter, in one comparable form (`unique: false` is the same as no `unique`). */
function comparable(options: Options): Options {
  const picked: Options = {};
  for (const name of COMPARED_OPTIONS) {
    const value = options[name];
    if (value === undefined || value === false) continue;
    picked[name] = value;
  }
  return picked;
}

/** Deep equality where `existing` may add fields the server fills in (a collation's defaults). */
function covers(existing: unknown, declared: unknown): boolean {
  if (declared === null || typeof declared !== 'object') return existing === declared;
  if (existing === null || typeof existing !== 'object') return false;
  return Object.entries(declared).every(([name, value]) => covers((existing as Options)[name], value));
}

function sameOptions(existing: Options, declared: Options): boolean {
  const a = comparable(existing);
  const b = comparable(declared);
  if (Object.keys(a).some((name) => !(name in b) && name !== 'collation')) return false;
  return Object.keys(b).every((name) => covers(a[name], b[name]));
}

/**
 * Compares one collection's declared indexes with the ones it has (`_id` is MongoDB's own and never extra).
 */
export function planCollection(
  collection: string,
  declared: DeclaredIndex[],
  existing: ExistingIndex[],
): CollectionPlan {
  const plan: CollectionPlan = { collection, missing: [], extra: [], conflicts: [] };
  const byKey = new Map(existing.map((index) => [keyId(index.key), index]));
  const matched = new Set<string>();
  for (const index of declared) {
    const found = byKey.get(keyId(index.key));
    if (!found) {
      plan.missing.push(index);
      continue;
    }
    matched.add(found.name);
    if (!sameOptions(found.options, index.options)) {
      plan.conflicts.push({
        collection,
        name: found.name,
        key: index.key,
        declared: comparable(index.options),
        existing: comparable(found.options),
      });
    }
  }
  plan.extra = existing.filter((index) => index.name !== '_id_' && !matched.has(index.name));
  return plan;
}

/** What the schema declares, as `createIndex` takes it (Mongoose's `_autoIndex` flag is its own). */
export function declaredIndexes(connection: Connection, modelName: string): DeclaredIndex[] {
  return connection.models[modelName].schema.indexes().map(([key, options]) => {
    const { _autoIndex: _ignored, ...rest } = (options ?? {}) as Options;
    // Mongoose also accepts "ascending"/"descending"; our schemas use 1 and -1, which MongoDB takes as they
    // are.
    return { key: key as KeySpec, options: rest };
  });
}

/**
 * The collection's indexes; none when it does not exist yet (production creates no collection at start-up).
 */
async function existingIndexes(connection: Connection, collection: string): Promise<ExistingIndex[]> {
  const db = connection.db!;
  if (!(await db.listCollections({ name: collection }, { nameOnly: true }).hasNext())) return [];
  const indexes = await db.collection(collection).listIndexes().toArray();
  return indexes.map(({ name, key, ...options }) => ({
    name: String(name),
    key: key as KeySpec,
    options: options as Options,
  }));
}

/** One plan per collection of a registered model, in collection-name order. */
export async function planIndexes(connection: Connection): Promise<CollectionPlan[]> {
  const plans: CollectionPlan[] = [];
  for (const modelName of Object.keys(connection.models)) {
    const collection = connection.models[modelName].collection.collectionName;
    plans.push(
      planCollection(
        collection,
        declaredIndexes(connection, modelName),
        await existingIndexes(connection, collection),
      ),
    );
  }
  return plans.sort((a, b) => a.collection.localeCompare(b.collection));
}

/**
 * Creates what is missing (waiting for a build already under way instead of starting it twice, printing
 * the server's progress: src/database/index-builds.ts) and, with `dropExtra`, drops what no schema declares.
 */
export async function applyPlan(
  connection: Connection,
  plan: CollectionPlan,
  dropExtra: boolean,
  watch: BuildWatch,
): Promise<void> {
  const collection = connection.db!.collection(plan.collection);
  await buildMissing(connection.db!, plan.collection, plan.missing, watch);
  if (!dropExtra) return;
  for (const index of plan.extra) await collection.dropIndex(index.name);
}

export const describeKey = (key: KeySpec) =>
  `{ ${Object.entries(key)
    .map(([field, direction]) => `${field}: ${JSON.stringify(direction)}`)
    .join(', ')} }`;

export const describeIndex = (index: DeclaredIndex | ExistingIndex) => {
  const options = comparable(index.options);
  const shown = Object.keys(options).length ? ` ${JSON.stringify(options)}` : '';
  return `${'name' in index ? `${index.name} ` : ''}${describeKey(index.key)}${shown}`;
};
