import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import { loggerParams } from '../src/common/logging/log-stream';
import { createTestApp, TestApp } from './helpers/app';
import { waitFor } from './helpers/wait';

interface LogLine {
  level: number;
  msg: string;
  errorId?: string;
  err?: { stack?: string };
  status?: number;
}

/** pino's numeric levels. */
const INFO = 30;
const ERROR = 50;

describe('A client that disconnects in the middle of its request body', () => {
  let t: TestApp;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    // The production logger options at level info, written into memory: pino writes each line synchronously.
    const sink = { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) };
    t = await createTestApp({
      overrides: [{ provide: PARAMS_PROVIDER_TOKEN, useValue: loggerParams('info', 'json', sink) }],
    });
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(() => t.close());

  /**
   * Sends the headers and 10 of the announced 100,000 bytes, waits until the server has the request (and a
   * little more, for Fastify to start reading its body), then hangs up.
   */
  async function sendPartialBodyAndHangUp(): Promise<void> {
    const server = t.app.getHttpServer();
    const { port } = server.address() as AddressInfo;
    const received = new Promise((resolve) => server.once('request', resolve));
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 10000\r\n\r\n{"email":"',
    );
    await received;
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
  }

  /** Polls the captured lines (the server sees the reset asynchronously) for the first that matches. */
  async function logLine(message: RegExp): Promise<LogLine> {
    const find = () => lines.find((l) => message.test(l.msg));
    await waitFor(() => find() !== undefined, {
      intervalMs: 20,
      describe: () => `no log line matching ${String(message)} in ${JSON.stringify(lines.map((l) => l.msg))}`,
    });
    return find()!;
  }

  it('is logged as an aborted request below error level, without an errorId or a stack', async () => {
    await sendPartialBodyAndHangUp();
    // Both the filter's line (an abort, or before this fix an unhandled error) and pino-http's access line.
    const handled = await logLine(/aborted by the client|Unhandled error/i);
    const access = await logLine(/^request (completed|errored|aborted)$/);

    expect(lines.filter((l) => l.level >= ERROR)).toEqual([]);
    expect(lines.some((l) => l.errorId !== undefined || /Unhandled error/.test(l.msg))).toBe(false);
    expect(handled).toMatchObject({ level: INFO, msg: expect.stringMatching(/aborted by the client/i) });
    expect(handled.err?.stack).toBeUndefined();
    expect(access.level).toBeLessThan(ERROR);
    expect(access.status).not.toBe(500);
  });
});
