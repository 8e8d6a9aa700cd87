import { MongoClient, type IndexDescriptionInfo } from 'mongodb';
import type { Connection } from 'mongoose';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_SELECTION_MS } from '../src/database/database.module';
import { indexDrift } from '../src/database/indexes-ready';
import { createTestApp, TestApp } from './helpers/app';
import { compileWorker, type CompiledWorker, COMPILE_HOOK_MS } from './helpers/worker-process';

/**
 * Production database settings: reads pinned to the primary, retried writes and reads, timeouts that
 * outlast a replica-set election, no index build at start-up; `npm run db:indexes` builds the declared
 * indexes instead (diff, then apply) and stops on an index whose options differ from the schema's.
 */
describe('Production database settings and npm run db:indexes', () => {
  let t: TestApp;
  let uri: string;
  let compiled: CompiledWorker;
  const production = {
    NODE_ENV: 'production',
    BCRYPT_COST: '10',
    TRUST_PROXY: 'loopback',
    MAIL_FROM: 'news@mail.example.com',
    PUBLIC_BASE_URL: 'https://mail.example.com',
    EMAIL_TRANSPORT: 'outbox',
  };

  /** A database of its own on the dev server, empty until the app (or the command) writes to it. */
  const freshDatabase = () => `${process.env.TEST_MONGODB_BASE_URI}/dbops_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    compiled = await compileWorker();
    uri = freshDatabase();
    // A URI that asks for what the service must not do: its own settings win.
    process.env.MONGODB_URI = `${uri}?readPreference=secondaryPreferred&retryWrites=false&retryReads=false`;
    Object.assign(process.env, production);
    t = await createTestApp();
  }, COMPILE_HOOK_MS);
  afterAll(() => t.close());

  /** Every index of every collection of the database, keyed `collection:{key}`. */
  const indexesIn = async (databaseUri: string) => {
    const client = await MongoClient.connect(databaseUri);
    try {
      const db = client.db();
      const found: Record<string, IndexDescriptionInfo> = {};
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
        for (const index of await db.collection(name).listIndexes().toArray()) {
          found[`${name}:${JSON.stringify(index.key)}`] = index;
        }
      }
      return found;
    } finally {
      await client.close();
    }
  };

  /** The unique indexes the schemas declare, keyed as indexesIn keys them. */
  const declaredUnique = (connection: Connection) =>
    Object.values(connection.models)
      .flatMap((model) =>
        model.schema
          .indexes()
          .filter(([, options]) => options?.unique)
          .map(([key]) => `${model.collection.collectionName}:${JSON.stringify(key)}`),
      )
      .sort();

  const runIndexes = (databaseUri: string | undefined, args: string[] = []) => {
    const script = [join('cli', 'db-indexes.js'), join('src', 'cli', 'db-indexes.js')]
      .map((name) => join(compiled.dir, name))
      .find((file) => existsSync(file));
    if (!script) throw new Error(`no db-indexes.js in ${compiled.dir}`);
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, [script, ...args], {
        cwd: compiled.dir,
        env: {
          PATH: process.env.PATH ?? '',
          NODE_PATH: join(__dirname, '..', 'node_modules'),
          ...production,
          LOG_LEVEL: 'warn',
          ...(databaseUri ? { MONGODB_URI: databaseUri } : {}),
          APP_SECRET: process.env.APP_SECRET ?? '',
          DATA_DIR: process.env.DATA_DIR ?? '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stdout, stderr }));
    });
  };

  it('pins reads to the primary, retries writes and reads, fails fast without a primary, builds no index', () => {
    const options = t.connection.getClient().options;
    expect(options.readPreference.mode).toBe('primary');
    expect(options.retryWrites).toBe(true);
    expect(options.retryReads).toBe(true);
    // Without a writable server (an outage, an election) a request answers 503 instead of waiting 30 s;
    // the driver checks twice a second, so the loss and the return are known within about a second.
    expect(options.serverSelectionTimeoutMS).toBe(SERVER_SELECTION_MS);
    expect(options.heartbeatFrequencyMS).toBe(500);
    expect(t.connection.get('bufferCommands')).toBe(false);
    expect(options.socketTimeoutMS).toBeGreaterThanOrEqual(30_000);
    expect(t.connection.config).toMatchObject({ autoIndex: false, autoCreate: false });
  });

  it('boots without building an index; db:indexes builds the declared ones, then has nothing to do', async () => {
    const afterBoot = await indexesIn(uri);
    expect(Object.values(afterBoot).filter((index) => index.name !== '_id_')).toEqual([]);
    // What a production start logs in that state: the unique rules are not enforced until the command runs.
    expect(await indexDrift(t.connection)).toMatch(
      /lacks \d+ declared index\(es\) \([1-9]\d* unique.*npm run db:indexes/,
    );

    const dryRun = await runIndexes(uri, ['--dry-run']);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toMatch(/\+ missing/);
    expect(await indexesIn(uri)).toEqual(afterBoot);

    const first = await runIndexes(uri);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/change\(s\) applied/);
    // What it builds, collection by collection, as it goes.
    expect(first.stdout).toMatch(/^ {2}tickets: building .*email_1_createdAt_-1__id_-1/m);
    // The dev database builds only unique indexes: exactly the declared ones are there now.
    const built = await indexesIn(uri);
    const unique = Object.entries(built)
      .filter(([, index]) => index.unique)
      .map(([key]) => key)
      .sort();
    expect(unique).toEqual(declaredUnique(t.connection));
    expect(unique.length).toBeGreaterThan(5);

    const second = await runIndexes(uri);
    expect(second).toMatchObject({ code: 0, stdout: 'Indexes match the schemas: nothing to do.\n' });
    expect(await indexDrift(t.connection)).toBeNull();
    expect(await indexesIn(uri)).toEqual(built);
  }, 180_000);

  it('runs each data migration once, resuming where a stopped run left it, printing its progress', async () => {
    const databaseUri = freshDatabase();
    const client = await MongoClient.connect(databaseUri);
    try {
      const db = client.db();
      const now = new Date();
      const feedback = (email: string) => ({
        appId: 'shop',
        type: 'bug',
        subject: 's',
        message: 'm',
        email,
        createdAt: now,
      });
      const { insertedIds } = await db
        .collection('feedback')
        .insertMany([feedback('Ada@Example.com'), feedback('Bob@Example.com'), feedback('Cy@Example.COM')]);
      // A run stopped after the first two documents: its place is recorded.
      await db
        .collection<{ _id: string; after: unknown; read: number; changed: number }>('data_migrations')
        .insertOne({ _id: '2026-11-lower-case-feedback-email', after: insertedIds[1], read: 2, changed: 0 });
      await db.collection('email_events').insertOne({ type: 'sent', provider: 'smtp', createdAt: now });

      const run = await runIndexes(databaseUri);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain('  2026-11-lower-case-feedback-email: 3 read, 1 changed, done\n');
      expect(run.stdout).toContain('  2026-11-email-events-expiry: 1 read, 1 changed, done\n');
      expect(run.stdout).toMatch(/^5 data migration\(s\) run\.$/m);
      const emails = (await db.collection('feedback').find().sort({ _id: 1 }).toArray()).map(
        (doc) => doc.email,
      );
      // Resumed after the recorded place: the two before it are the stopped run's business.
      expect(emails).toEqual(['Ada@Example.com', 'Bob@Example.com', 'cy@example.com']);
      const [event] = await db.collection('email_events').find().toArray();
      expect((event.expiresAt as Date).getTime() - now.getTime()).toBe(400 * 86_400_000);

      const again = await runIndexes(databaseUri);
      expect(again).toMatchObject({ code: 0, stdout: 'Indexes match the schemas: nothing to do.\n' });
    } finally {
      await client.close();
    }
  }, 180_000);

  it('exits non-zero on an index with the declared keys and other options, naming it', async () => {
    const databaseUri = freshDatabase();
    const [collection, key] = declaredUnique(t.connection)[0].split(/:(.*)/s);
    const client = await MongoClient.connect(databaseUri);
    try {
      await client
        .db()
        .collection(collection)
        .createIndex(JSON.parse(key) as Record<string, 1>, { name: 'by_hand', unique: true, sparse: true });
    } finally {
      await client.close();
    }
    const run = await runIndexes(databaseUri);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Conflicting index ${collection}.by_hand`);
    expect(run.stderr).toContain(`db.${collection}.dropIndex("by_hand")`);
  }, 180_000);

  it('refuses to run without MONGODB_URI', async () => {
    const run = await runIndexes(undefined);
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toContain('MONGODB_URI');
  });
});
