import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidEnvironmentError, validateEnv } from '../src/config/env';
import { startDevDatabase } from '../src/database/dev-database';
import { createTestApp } from './helpers/app';
import { waitFor } from './helpers/wait';

const SECRET = 'x'.repeat(32);

/**
 * The embedded dev database's JVM runs with a bounded heap: the service passes DEV_DATABASE_MAX_HEAP (512m
 * by default) as -Xmx, and the JVM reports the limit it applies. How memory and the H2 file behave under a
 * long load is measured by `npm run bench -- dev-db-footprint`, not here.
 */
describe('Dev database footprint', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'devdb-footprint-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

  /** The JVMs this test process started (the children of this Jest worker). */
  const javaChildren = () =>
    readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => existsSync(`/proc/${pid}`) && commandLine(pid)[0] === 'java');

  it('launches the JVM with the heap limit asked for, and the JVM reports applying it', async () => {
    const lines: string[] = [];
    const database = await startDevDatabase({
      file: join(dir, 'mongo.mv'),
      maxHeap: '96m',
      log: (_level, line) => lines.push(line),
    });
    try {
      expect(commandLine(database.pid)).toContain('-Xmx96m');
      // The report follows READY on the same stream: wait for it to arrive.
      await waitFor(() => lines.some((line) => line.includes('heap limit')), {
        intervalMs: 20,
        describe: () => `no heap limit line in ${JSON.stringify(lines)}`,
      });
      const reported = lines.find((line) => line.includes('heap limit'));
      expect(reported).toMatch(/heap limit (\d+) MB; data in .*mongo\.mv/);
      const mb = Number(/heap limit (\d+) MB/.exec(reported!)![1]);
      expect(mb).toBeGreaterThan(80);
      expect(mb).toBeLessThanOrEqual(96);
    } finally {
      await database.stop();
    }
  });

  it('the service starts its embedded database with DEV_DATABASE_MAX_HEAP as -Xmx', async () => {
    const saved = { ...process.env };
    delete process.env.MONGODB_URI;
    process.env.DATA_DIR = dir;
    process.env.DEV_DATABASE_MAX_HEAP = '160m';
    const before = new Set(javaChildren());
    const t = await createTestApp();
    try {
      const started = javaChildren().filter((pid) => !before.has(pid));
      expect(started).toHaveLength(1);
      const args = commandLine(started[0]);
      expect(args).toContain('-Xmx160m');
      expect(args).toContain(join(dir, 'mongo.mv'));
      // Idle memory goes back to the system: a periodic collection, and a heap that shrinks after it.
      expect(args).toContain('-XX:G1PeriodicGCInterval=30000');
    } finally {
      await t.close();
      process.env = saved;
      // The service's database stops when the service's process ends; this test's process goes on.
      for (const pid of javaChildren().filter((child) => !before.has(child))) {
        process.kill(pid);
        while (existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z')) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  });

  it('defaults DEV_DATABASE_MAX_HEAP to 512m and refuses a value the JVM would not take', () => {
    expect(validateEnv({ APP_SECRET: SECRET }).DEV_DATABASE_MAX_HEAP).toBe('512m');
    expect(validateEnv({ APP_SECRET: SECRET, DEV_DATABASE_MAX_HEAP: '2g' }).DEV_DATABASE_MAX_HEAP).toBe('2g');
    for (const value of ['512', '512mb', '-1g', '0m', 'lots']) {
      expect(() => validateEnv({ APP_SECRET: SECRET, DEV_DATABASE_MAX_HEAP: value })).toThrow(
        InvalidEnvironmentError,
      );
      expect(() => validateEnv({ APP_SECRET: SECRET, DEV_DATABASE_MAX_HEAP: value })).toThrow(
        /DEV_DATABASE_MAX_HEAP/,
      );
    }
  });
});
