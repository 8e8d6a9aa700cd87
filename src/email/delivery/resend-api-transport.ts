import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { DeliveryReceipt, MailTransport, OutgoingMail } from './mail-transport';

export interface ResendApiOptions {
  /** Sent as `Authorization: Bearer <key>`; never put into a message, an error or a log line. */
  apiKey: string;
  /** `https://api.resend.com`, or a local receiver in tests; its path is kept (`…/v1` → `…/v1/emails`). */
  baseUrl: string;
  /** The most one request may take, connecting and queueing for a connection included. */
  timeoutMs: number;
  /** Connections kept open to the API (the worker's concurrency, as the SMTP pool). */
  maxConnections: number;
}

/** Resend's error names that say the idempotency key is taken (its docs, "Idempotency keys"). */
const CONCURRENT_KEY = 'concurrent_idempotent_requests';
const KEY_USED_WITH_OTHER_PAYLOAD = 'invalid_idempotent_request';

/**
 * The send endpoint under the base URL, whose path is kept with or without its trailing slash: resolving an
 * absolute `/emails` would drop it, and a relative one the base's last segment without the slash.
 */
export const emailsUrl = (baseUrl: string): URL => {
  const base = new URL(baseUrl);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL('emails', base);
};

/** The most of an answer's body read: the API answers a few hundred bytes; more is not the API. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * What an API answer (or its absence) means for the job. `outage`: the API is out of reach for every
 * message (network, timeout, 429, 5xx, our key or sender refused): the engine's circuit, no attempt counted.
 * `permanent`: this message can never be sent as it is (a validation error): the job is dead at once.
 * `retry`: this message, later (its key is still being processed by an earlier request).
 */
export type ResendFailureKind = 'outage' | 'permanent' | 'retry';

/** A send that failed; `permanent` is what the worker's failure rule reads. */
export class ResendApiError extends Error {
  readonly permanent: boolean;

  constructor(
    readonly kind: ResendFailureKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.permanent = kind === 'permanent';
  }
}

/** Which failures of an answered request are an outage rather than the message's fate. */
function kindOfStatus(status: number, errorName: string): ResendFailureKind {
  // 408 and 429: the API is there but takes nothing now; 5xx: its own fault. 401/403: our API key or our
  // sending domain is refused, which no message can get past: wait for the operator, kill no job.
  if (status === 408 || status === 429 || status >= 500 || status === 401 || status === 403) return 'outage';
  if (status === 409 && errorName === CONCURRENT_KEY) return 'retry';
  return 'permanent';
}

/** `{name, message}` of a Resend error answer, whatever the body turned out to be. */
function errorOf(body: string): { name: string; message: string } {
  try {
    const parsed = JSON.parse(body) as { name?: unknown; message?: unknown };
    return {
      name: typeof parsed.name === 'string' ? parsed.name : '',
      message: typeof parsed.message === 'string' ? parsed.message.slice(0, 500) : '',
    };
  } catch {
    return { name: '', message: body.slice(0, 200) };
  }
}

/** The `id` of a success answer; a success whose body is not what the API sends still took the message. */
function idOf(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id.length > 0 && id.length <= 256 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON body of `POST /emails` (Resend's field names). */
function bodyOf(mail: OutgoingMail): string {
  return JSON.stringify({
    from: mail.from,
    to: [mail.to],
    subject: mail.subject,
    html: mail.html,
    text: mail.text,
    reply_to: mail.replyTo,
    headers: Object.keys(mail.headers).length > 0 ? mail.headers : undefined,
  });
}

/**
 * Resend's HTTP API (`POST /emails`). Every request carries `Idempotency-Key` = the message's key (the same
 * for every attempt of a job), and Resend sends a key once within 24 hours, answering a repeat with the
 * first answer: so a job whose outcome is unknown after a crash may be sent again (`idempotent`), which
 * SMTP cannot offer. Keep-alive connections, at most `maxConnections` at once; each request ends within
 * `timeoutMs`. The answer's `id` is recorded as the provider's message id.
 */
export class ResendApiTransport implements MailTransport {
  readonly provider = 'resend-api';
  readonly dependency = 'Resend API';
  readonly idempotent = true;
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;

  constructor(private readonly options: ResendApiOptions) {
    this.url = emailsUrl(options.baseUrl);
    const https = this.url.protocol === 'https:';
    const agentOptions = {
      keepAlive: true,
      maxSockets: options.maxConnections,
      maxFreeSockets: options.maxConnections,
    };
    this.agent = https ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.request = https ? httpsRequest : httpRequest;
  }

  async send(mail: OutgoingMail): Promise<DeliveryReceipt> {
    const { status, body } = await this.post(bodyOf(mail), mail.idempotencyKey);
    if (status >= 200 && status < 300) {
      const providerMessageId = idOf(body);
      return {
        accepted: [mail.to],
        rejected: [],
        response: `${status} accepted as ${providerMessageId ?? '(no id)'}`,
        providerMessageId,
      };
    }
    const error = errorOf(body);
    if (status === 409 && error.name === KEY_USED_WITH_OTHER_PAYLOAD) {
      // Resend already took a request with this key, from an earlier attempt of this job whose content
      // differed (a template edited since): that request is this message, and it was not sent twice.
      return {
        accepted: [mail.to],
        rejected: [],
        response: `${status} ${error.name}: sent by an earlier attempt (its id was not recorded)`,
      };
    }
    throw new ResendApiError(
      kindOfStatus(status, error.name),
      `Resend API ${status}${error.name ? ` ${error.name}` : ''}${error.message ? `: ${error.message}` : ''}`,
      status,
    );
  }

  /** No answer at all, or an answer that says the API cannot take anything now. */
  unreachable(error: unknown): boolean {
    return !(error instanceof ResendApiError) || error.kind === 'outage';
  }

  onApplicationShutdown(): void {
    this.agent.destroy();
  }

  /** One request; rejects with a plain error (no answer) when it fails or outlives the time limit. */
  private post(body: string, idempotencyKey: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = this.request(
        this.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.options.apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'idempotency-key': idempotencyKey,
          },
        },
        (response) => void readAnswer(response).then(resolve, reject),
      );
      const timer = setTimeout(
        () => request.destroy(new Error(`No Resend API answer within ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
      request.once('close', () => clearTimeout(timer));
      request.once('error', reject);
      request.end(body);
    });
  }
}

function readAnswer(response: IncomingMessage): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        response.destroy(new Error(`Resend API answer over ${MAX_ANSWER_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.once('error', reject);
    response.once('end', () =>
      resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}
