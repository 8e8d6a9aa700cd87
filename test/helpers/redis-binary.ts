import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * tools/redis-dev-server: a pom that unpacks one redis-server from the embedded-redis jar (Maven Central).
 */
const POM_DIR = resolve(__dirname, '..', '..', 'tools', 'redis-dev-server');
/** Git-ignored like the dev database's build output; filled once, kept between runs. */
const CACHE_DIR = join(POM_DIR, 'target', 'redis');

/**
 * The binaries embedded-redis 1.4.3 ships, by Node's `${platform}-${arch}`. Only linux-x64 is exercised
 * here (CI's platform); the others are the jar's own builds for them.
 */
const BINARY_BY_PLATFORM: Readonly<Record<string, string>> = {
  'linux-x64': 'redis-server-6.2.6-v5-linux-amd64',
  'linux-arm64': 'redis-server-6.2.7-linux-arm64',
  'linux-ia32': 'redis-server-6.2.7-linux-386',
  'darwin-x64': 'redis-server-6.2.6-v5-darwin-amd64',
  'darwin-arm64': 'redis-server-6.2.6-v5-darwin-arm64',
};

const TERMINAL_CODES = /\u001b\[[0-9;?]*[A-Za-z]/g;

function binaryName(): string {
  const platform = `${process.platform}-${process.arch}`;
  const name = BINARY_BY_PLATFORM[platform];
  if (!name) {
    throw new Error(
      `No packaged redis-server for ${platform}: embedded-redis ships ${Object.keys(BINARY_BY_PLATFORM).join(', ')}. ` +
        'The Redis tests (test/multi-instance, test/redis-throttler-storage) need one of those platforms.',
    );
  }
  return name;
}

/**
 * The path of a runnable redis-server taken from the embedded-redis jar, unpacked by Maven on first use (it
 * downloads the jar into ~/.m2 like the dev database's artifacts). Always this one, never a redis-server on
 * PATH, so the tests behave the same whatever the machine has installed. Concurrent Jest workers may both
 * unpack: each into a directory of its own, then an atomic rename, so no one runs a half-written file.
 */
export async function packagedRedisServer(): Promise<string> {
  const name = binaryName();
  const binary = join(CACHE_DIR, name);
  if (existsSync(binary)) return binary;

  mkdirSync(CACHE_DIR, { recursive: true });
  const staging = mkdtempSync(join(POM_DIR, 'target', 'unpacking-'));
  try {
    await promisify(execFile)(
      'mvn',
      ['-q', '-B', 'package', `-Dredis.binary=${name}`, `-Dredis.outputDirectory=${staging}`],
      { cwd: POM_DIR, encoding: 'utf8' },
    ).catch((error: NodeJS.ErrnoException & { stdout?: string; stderr?: string }) => {
      const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.replace(TERMINAL_CODES, '').trim();
      throw new Error(
        error.code === 'ENOENT'
          ? 'The Redis tests need Maven (mvn) to fetch redis-server from Maven Central, as the dev database does.'
          : `Unpacking redis-server with Maven failed in ${POM_DIR}:\n${output.split('\n').slice(-30).join('\n')}`,
      );
    });
    const unpacked = join(staging, name);
    if (!existsSync(unpacked)) throw new Error(`Maven ran but ${name} is not in ${staging}`);
    chmodSync(unpacked, 0o755);
    renameSync(unpacked, binary);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}
