import type { Db, Document } from 'mongodb';
import { isTransientDatabaseError } from '../common/database/transient-retry';

/** An index as the schemas declare it (index-plan's DeclaredIndex). */
interface DeclaredIndex {
  key: Record<string, unknown>;
  options: Record<string, unknown>;
}

/** One index build the server reports as running. */
export interface IndexBuild {
  collection: string;
  /** The indexes it builds; empty when the server does not say (then any index of the collection). */
  indexes: string[];
  /** The server's own account: `Index Build: scanning collection ... 12%`. */
  message: string | null;
  done?: number;
  total?: number;
  seconds?: number;
}

/**
 * The `$currentOp` stage that lists index builds: the client's `createIndexes` command, and the build
 * thread the server runs for it (MongoDB 4.4 and later), whose `msg` says how far it is.
 */
export const INDEX_BUILD_OPS: Document[] = [
  { $currentOp: { allUsers: true, idleConnections: true } },
  {
    $match: {
      $or: [
        { op: 'command', 'command.createIndexes': { $exists: true } },
        { op: 'none', msg: { $regex: '^Index Build' } },
      ],
    },
  },
];

/** The name MongoDB gives an index that is not named: `field_1_other_-1`. */
export const indexName = (index: DeclaredIndex): string =>
  typeof index.options.name === 'string'
    ? index.options.name
    : Object.entries(index.key)
        .map(([field, direction]) => `${field}_${String(direction)}`)
        .join('_');

/**
 * The builds of one database in a `$currentOp` answer, one per collection and set of indexes (the client's
 * command and the server's build thread describe the same build: the one that has progress wins).
 */
export function indexBuildsOf(ops: Document[], database: string): IndexBuild[] {
  const builds = new Map<string, IndexBuild>();
  for (const op of ops) {
    const command = (op.command ?? {}) as Document;
    const ns = typeof op.ns === 'string' ? op.ns : `${String(command.$db)}.${String(command.createIndexes)}`;
    if (!ns.startsWith(`${database}.`)) continue;
    const collection =
      typeof command.createIndexes === 'string' ? command.createIndexes : ns.slice(database.length + 1);
    const indexes = Array.isArray(command.indexes)
      ? (command.indexes as Document[]).map((index) => String(index.name)).sort()
      : [];
    const progress = (op.progress ?? {}) as { done?: number; total?: number };
    const build: IndexBuild = {
      collection,
      indexes,
      message: typeof op.msg === 'string' ? op.msg : null,
      ...(typeof progress.total === 'number' ? { done: progress.done ?? 0, total: progress.total } : {}),
      ...(typeof op.secs_running === 'number' ? { seconds: op.secs_running } : {}),
    };
    const id = `${collection} ${indexes.join(',')}`;
    const known = builds.get(id);
    if (!known || (build.message && !known.message)) builds.set(id, build);
  }
  return [...builds.values()];
}

/** One progress line: `tickets email_1: Index Build: scanning collection (41%, 12 s)`. */
export function describeBuild(build: IndexBuild): string {
  const figures = [
    build.total ? `${Math.floor(((build.done ?? 0) / build.total) * 100)}%` : '',
    build.seconds !== undefined ? `${build.seconds} s` : '',
  ].filter(Boolean);
  // The server repeats its phase before the counts ("scanning collection Index Build: scanning ...").
  const phase =
    build.message
      ?.split(':')
      .slice(0, 2)
      .join(':')
      .replace(/ Index Build$/, '') ?? 'building';
  return `${build.collection} ${build.indexes.join(', ') || '(index)'}: ${phase}${
    figures.length ? ` (${figures.join(', ')})` : ''
  }`;
}

/** What building needs of the server and the clock; the command gives the real ones, tests recorded ones. */
export interface BuildWatch {
  /** Builds running on the server now; null when it will not say (no `$currentOp` privilege, say). */
  builds(): Promise<IndexBuild[] | null>;
  /** The names of the collection's finished indexes. */
  listed(collection: string): Promise<Set<string>>;
  /** Resolves after `ms`, or earlier when `until` settles. */
  sleep(ms: number, until?: Promise<unknown>): Promise<void>;
  print(line: string): void;
  intervalMs: number;
}

const runningFor = (builds: IndexBuild[], collection: string, names: string[]) =>
  builds.filter(
    (build) =>
      build.collection === collection &&
      (build.indexes.length === 0 || build.indexes.some((name) => names.includes(name))),
  );

/**
 * Waits until the indexes are listed, printing the server's progress when it changes. Returns `false`
 * when no build of them runs any more and they are not there (the build failed or was killed), so the
 * caller starts it again.
 */
export async function waitUntilBuilt(
  collection: string,
  names: string[],
  watch: BuildWatch,
): Promise<boolean> {
  let shown = '';
  for (;;) {
    const listed = await watch.listed(collection);
    if (names.every((name) => listed.has(name))) return true;
    const builds = await watch.builds();
    if (builds !== null) {
      const running = runningFor(builds, collection, names);
      if (running.length === 0) {
        // It may have finished between the two reads.
        const again = await watch.listed(collection);
        return names.every((name) => again.has(name));
      }
      const line = running.map(describeBuild).join('; ');
      if (line !== shown) watch.print(`    ${line}`);
      shown = line;
    }
    await watch.sleep(watch.intervalMs);
  }
}

/**
 * Builds the collection's missing indexes so that no client timeout ends the run: an index the server is
 * already building (an earlier run that lost its connection) is waited for, not started twice; the others
 * are built by one `createIndexes`, with the server's progress printed while it runs; and when the command's
 * connection is lost (a socket timeout, a failover), the build goes on on the server, so the run waits for
 * it by polling instead of failing.
 */
export async function buildMissing(
  db: Db,
  collection: string,
  missing: DeclaredIndex[],
  watch: BuildWatch,
): Promise<void> {
  if (missing.length === 0) return;
  const running = runningFor((await watch.builds()) ?? [], collection, missing.map(indexName));
  const runningNames = new Set(running.flatMap((build) => build.indexes));
  const joined = missing.filter((index) => runningNames.has(indexName(index)));
  let toStart = missing.filter((index) => !runningNames.has(indexName(index)));
  if (joined.length) {
    const names = joined.map(indexName);
    watch.print(`  ${collection}: ${names.join(', ')} already being built (an earlier run?): waiting for it`);
    if (!(await waitUntilBuilt(collection, names, watch))) toStart = [...toStart, ...joined];
  }
  if (toStart.length === 0) return;
  const names = toStart.map(indexName);
  watch.print(`  ${collection}: building ${names.join(', ')}`);
  const command = db.command({
    createIndexes: collection,
    indexes: toStart.map((index) => ({ ...index.options, key: index.key, name: indexName(index) })),
  });
  let finished = false;
  const settled = command.then(
    () => (finished = true),
    () => (finished = true),
  );
  const progress = (async () => {
    let shown = '';
    for (;;) {
      await watch.sleep(watch.intervalMs, settled);
      if (finished) return;
      const line = runningFor((await watch.builds()) ?? [], collection, names)
        .map(describeBuild)
        .join('; ');
      if (line && line !== shown) watch.print(`    ${line}`);
      shown = line;
    }
  })();
  try {
    await command;
  } catch (error) {
    if (!isTransientDatabaseError(error)) throw error;
    watch.print(`  ${collection}: the connection was lost (${(error as Error).message}); the build goes on`);
    if (!(await waitUntilBuilt(collection, names, watch))) throw error;
  } finally {
    finished = true;
    await progress;
  }
}

/** The real server and clock, for `npm run db:indexes`. */
export function serverWatch(db: Db, print: (line: string) => void, intervalMs = 5_000): BuildWatch {
  return {
    intervalMs,
    print,
    async builds() {
      try {
        const ops = await db.client.db('admin').aggregate(INDEX_BUILD_OPS).toArray();
        return indexBuildsOf(ops, db.databaseName);
      } catch {
        return null;
      }
    },
    async listed(collection) {
      const indexes = await db.collection(collection).listIndexes().toArray();
      return new Set(indexes.map((index) => String((index as { name?: unknown }).name)));
    },
    sleep(ms, until) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        void until?.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
