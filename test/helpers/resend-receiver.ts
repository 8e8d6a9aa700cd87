import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SAFETY_DEADLINE_MS } from './wait';

/** The JSON body of Resend's `POST /emails`, as far as the tests read it. */
export interface ResendEmailBody {
  from: string;
  to: string[];
  subject: string;
  html?: string;
  text?: string;
  reply_to?: string;
  headers?: Record<string, string>;
}

export interface ResendCall {
  headers: IncomingHttpHeaders;
  body: ResendEmailBody;
  /** The status answered (undefined while the call waits). */
  status?: number;
  /** The client closed the request before it was answered (its time limit ran out). */
  abandoned?: boolean;
}

/** A message the receiver took (what Resend would deliver), with the id it answered. */
export interface ResendMessage {
  id: string;
  idempotencyKey?: string;
  body: ResendEmailBody;
}

/**
 * How to answer one call: take the message (after `delayMs`, or once `after` settles; it counts as taken
 * when the call arrives, as a provider that has begun sending), refuse it with a status and Resend's error
 * `name`, or never answer.
 */
export type ResendAnswer =
  | { accept: true; delayMs?: number; after?: Promise<void> }
  | { status: number; name: string; message?: string }
  | 'hang';

export interface ResendReceiver {
  /** `http://127.0.0.1:<port>`: the transport's RESEND_API_URL. */
  url: string;
  calls: ResendCall[];
  messages: ResendMessage[];
  /** Decides each answer (default: take it at once); `index` counts calls from 0. */
  answer: (call: ResendCall, index: number) => ResendAnswer;
  waitFor(condition: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** How long Resend keeps an idempotency key (its docs: 24 hours). */
const KEY_WINDOW_MS = 24 * 60 * 60_000;

interface KeyRecord {
  bodyHash: string;
  at: number;
  /** Absent while the first request with the key is still being processed. */
  answer?: { status: number; body: string };
}

/**
 * A local stand-in for Resend's `POST /emails` that honours idempotency keys as Resend documents them: the
 * same key with the same body within 24 h gets the first answer and no second message; with another body a
 * 409 `invalid_idempotent_request`; while the first request is still being processed a 409
 * `concurrent_idempotent_requests`. A refused request does not keep its key. Requests without
 * `Authorization: Bearer <apiKey>` get a 401.
 */
export async function startResendReceiver(apiKey: string): Promise<ResendReceiver> {
  const keys = new Map<string, KeyRecord>();
  const timers = new Set<NodeJS.Timeout>();
  const receiver: ResendReceiver = {
    url: '',
    calls: [],
    messages: [],
    answer: () => ({ accept: true }),
    async waitFor(condition, timeoutMs = SAFETY_DEADLINE_MS) {
      const deadline = Date.now() + timeoutMs;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`Resend receiver: waited ${timeoutMs} ms in vain`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
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
      const raw = Buffer.concat(chunks).toString('utf8');
      const reply = (status: number, body: unknown) => {
        call.status = status;
        // The client may be gone (killed mid-request): the answer is kept for its key all the same.
        if (!response.destroyed) {
          response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        }
      };
      const call: ResendCall = { headers: request.headers, body: JSON.parse(raw) as ResendEmailBody };
      response.on('close', () => {
        if (!response.writableEnded) call.abandoned = true;
      });
      const index = receiver.calls.push(call) - 1;
      if (request.url !== '/emails' || request.method !== 'POST') {
        return reply(404, { statusCode: 404, name: 'not_found', message: 'Not found' });
      }
      if (request.headers.authorization !== `Bearer ${apiKey}`) {
        return reply(401, { statusCode: 401, name: 'missing_api_key', message: 'Missing API key' });
      }
      const key = request.headers['idempotency-key'] as string | undefined;
      const bodyHash = createHash('sha256').update(raw).digest('hex');
      const known = key ? keys.get(key) : undefined;
      if (key && known && Date.now() - known.at < KEY_WINDOW_MS) {
        if (known.bodyHash !== bodyHash) {
          return reply(409, {
            statusCode: 409,
            name: 'invalid_idempotent_request',
            message: 'This idempotency key has already been used on a request that had a different payload.',
          });
        }
        if (!known.answer) {
          return reply(409, {
            statusCode: 409,
            name: 'concurrent_idempotent_requests',
            message: 'Another request with the same idempotency key is currently in progress.',
          });
        }
        return reply(known.answer.status, JSON.parse(known.answer.body));
      }
      const answer = receiver.answer(call, index);
      if (answer === 'hang') return;
      if (!('accept' in answer)) {
        return reply(answer.status, {
          statusCode: answer.status,
          name: answer.name,
          message: answer.message ?? answer.name,
        });
      }
      const id = randomUUID();
      receiver.messages.push({ id, idempotencyKey: key, body: call.body });
      const record: KeyRecord = { bodyHash, at: Date.now() };
      if (key) keys.set(key, record);
      const finish = () => {
        record.answer = { status: 200, body: JSON.stringify({ id }) };
        reply(200, { id });
      };
      if (answer.after) return void answer.after.then(finish);
      if (!answer.delayMs) return finish();
      const timer = setTimeout(() => {
        timers.delete(timer);
        finish();
      }, answer.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
