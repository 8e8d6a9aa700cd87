import { createServer } from 'node:net';
import {
  type CompiledWorker,
  startCompiled,
  waitFor,
  type WorkerEnv,
  type WorkerProcess,
} from './worker-process';

export interface ApiProcess extends WorkerProcess {
  baseUrl: string;
}

export interface ApiAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions read the JSON freely
  body: any;
}

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no free port')),
      );
    });
  });
}

/**
 * `node <build>/main.js` (the HTTP server, as `npm start` runs it) as a real OS process on a free loopback
 * port; resolves once `/health` answers 200. The environment is only what is given (see `startCompiled`).
 */
export async function startApi(
  compiled: CompiledWorker,
  name: string,
  env: WorkerEnv,
  startTimeoutMs = 60_000,
): Promise<ApiProcess> {
  const port = await freePort();
  const api = startCompiled(compiled, compiled.mainJs, name, {
    HOST: '127.0.0.1',
    ...env,
    PORT: String(port),
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (api.exit() !== null) throw new Error(`${name} exited during start-up:\n${api.output()}`);
      const health = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) }).catch(
        () => undefined,
      );
      return health?.status === 200;
    },
    {
      timeoutMs: startTimeoutMs,
      intervalMs: 100,
      describe: () => `${name} not healthy; output:\n${api.output().slice(-4_000)}`,
    },
  );
  return Object.assign(api, { baseUrl });
}

/** One JSON request to a process; the body is parsed when it is JSON. */
export async function callApi(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<ApiAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (e.g. an HTML page): the text is the body.
  }
  return { status: res.status, body };
}
