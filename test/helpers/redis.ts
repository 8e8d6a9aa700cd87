import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './api-process';
import { packagedRedisServer } from './redis-binary';
import { SAFETY_DEADLINE_MS } from './wait';

export interface TestRedis {
  url: string;
  port: number;
  /** A client of the test's own, for looking at the keys the service wrote. */
  client(): Redis;
  /** SIGKILL the server (an outage); `start()` brings it back on the same port, empty. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that holds its connections but answers nothing (a hung host). */
  pause(): void;
  resume(): void;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/**
 * A real `redis-server` (the one packaged in embedded-redis, see redis-binary.ts) as a child process of the
 * test: loopback only, a random port, nothing written to disk (`--save ''`, no AOF), killed by `close()`.
 * No system service or installed package is used or needed.
 */
export async function startRedis(): Promise<TestRedis> {
  const redisServer = await packagedRedisServer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'test-redis-'));
  const clients: Redis[] = [];
  let child: ChildProcess | undefined;
  let output = '';

  const start = async (): Promise<void> => {
    output = '';
    const started = spawn(
      redisServer,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + SAFETY_DEADLINE_MS;
    while (!output.includes('Ready to accept connections')) {
      if (started.exitCode !== null || Date.now() > deadline) {
        started.kill('SIGKILL');
        throw new Error(`redis-server did not start on port ${port}:\n${output}`);
      }
      await new Promise((done) => setTimeout(done, 20));
    }
  };

  const stop = async (): Promise<void> => {
    const running = child;
    running?.kill('SIGCONT');
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((done) => running.once('exit', () => done()));
    running.kill('SIGKILL');
    await exited;
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    client: () => {
      const client = new Redis(port, '127.0.0.1', { lazyConnect: false });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    stop,
    start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    close: async () => {
      for (const client of clients.splice(0)) client.disconnect();
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
