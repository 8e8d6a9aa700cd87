import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SAFETY_DEADLINE_MS } from './wait';

export interface WebhookCall {
  path: string;
  headers: IncomingHttpHeaders;
  // Whatever JSON the service sent; each test states the shape it expects.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The status answered (undefined while a call hangs or waits). */
  status?: number;
}

/**
 * How to answer one call: a status, after an optional delay or once `after` resolves (a gate the test
 * opens when it has seen what it waits for), or never (the connection stays open).
 */
export type WebhookAnswer = { status: number; delayMs?: number; after?: Promise<unknown> } | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Every call, answered or not, in arrival order. */
  calls: WebhookCall[];
  /** Decides each answer (default: 200 at once); `index` counts calls from 0. */
  answer: (call: WebhookCall, index: number) => WebhookAnswer;
  /** Resolves once `count` calls have arrived (rejects after `timeoutMs`). */
  waitForCalls(count: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records the webhooks it receives and answers as told. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const timers = new Set<NodeJS.Timeout>();
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    calls: [],
    answer: () => ({ status: 200 }),
    async waitForCalls(count, timeoutMs = SAFETY_DEADLINE_MS) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.calls.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`${receiver.calls.length} of ${count} webhook call(s) after ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    reset() {
      receiver.calls.length = 0;
      receiver.answer = () => ({ status: 200 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Recorded as text.
      }
      const call: WebhookCall = { path: request.url ?? '', headers: request.headers, body };
      const index = receiver.calls.push(call) - 1;
      const answer = receiver.answer(call, index);
      // Never answered: the connection stays open until the caller gives up or the receiver closes.
      if (answer === 'hang') return;
      const send = () => {
        call.status = answer.status;
        response.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok');
      };
      if (answer.after) return void answer.after.then(send);
      if (!answer.delayMs) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, answer.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
