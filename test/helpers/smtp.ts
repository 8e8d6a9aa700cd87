import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** Header names lower-cased; folded lines joined. */
  headers: Record<string, string>;
  body: string;
  raw: string;
  receivedAt: number;
}

/**
 * What the server answers to a message: accept, or reject with an SMTP code (4xx temporary, 5xx permanent).
 */
export type SmtpVerdict = { accept: true } | { accept: false; code: number; message: string };

export interface TestSmtpServer {
  url: string;
  received: ReceivedMail[];
  /**
   * Every DATA attempt, accepted or not, with its time (to see retry spacing). `accepted` is the verdict;
   * a message whose client was gone before the answer (killed, or the server stopped) is not in `received`.
   */
  attempts: { to: string[]; at: number; accepted: boolean }[];
  /** Decides each message's fate; accepts everything by default. */
  verdict: (mail: ReceivedMail) => SmtpVerdict;
  /** Decides each recipient at RCPT TO (a mailbox that does not exist: 550 5.1.1); accepts by default. */
  rcptVerdict: (address: string) => SmtpVerdict;
  /** Every RCPT TO the server was asked, accepted or not. */
  rcptAttempts: { to: string; accepted: boolean }[];
  /** The text after `250 ` for an accepted message (a provider names its id there, e.g. SES `Ok <id>`). */
  acceptText: (mail: ReceivedMail) => string;
  /** Delay before answering each message, to keep deliveries in flight. */
  delayMs: number;
  /** How long this message waits before its answer: `delayMs` unless a test holds some messages only. */
  delayFor: (mail: ReceivedMail) => number;
  /** Answers now every message still waiting out `delayMs` (a send held until the test has seen enough). */
  answerWaiting(): void;
  /** Server errors other than connection resets by clients. */
  serverErrors: Error[];
  close(): Promise<void>;
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = split >= 0 ? raw.slice(0, split) : raw;
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  // As a receiver reads it (RFC 2369): whitespace a folded URL list got inside its brackets is ignored.
  if (headers['list-unsubscribe'])
    headers['list-unsubscribe'] = headers['list-unsubscribe'].replace(/<[^>]*>/g, (url) =>
      url.replace(/\s+/g, ''),
    );
  return { from, to, headers, body: split >= 0 ? raw.slice(split + 4) : '', raw, receivedAt: Date.now() };
}

export interface SmtpServerOptions {
  /** A fixed port, to bring a stopped server back where its clients connect (default: any free port). */
  port?: number;
  /**
   * How long `close()` lets open connections finish (smtp-server's default is 30 s); a short one makes
   * stopping the server an outage its clients see at once.
   */
  closeTimeoutMs?: number;
}

/** smtp-server's own answer to the clients of a server that is stopping. */
function shuttingDown(): Error {
  const error = new Error('Server shutting down') as Error & { responseCode: number };
  error.responseCode = 421;
  return error;
}

/** A real SMTP server on loopback (npm `smtp-server`) that records what it receives. */
export async function startSmtpServer(serverOptions: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const state: Omit<TestSmtpServer, 'url' | 'close' | 'answerWaiting'> = {
    received: [],
    attempts: [],
    verdict: () => ({ accept: true }),
    rcptVerdict: () => ({ accept: true }),
    rcptAttempts: [],
    acceptText: () => 'Queued',
    delayMs: 0,
    delayFor: () => state.delayMs,
    serverErrors: [],
  };
  // Sessions whose connection has closed: a message answered after that was never acknowledged.
  const closed = new Set<string>();
  // Set when `close()` begins: smtp-server then writes "421 Server shutting down" to every connection at
  // once, so a client reads that as the answer to a message whose data is still arriving, and sends it again.
  // Such a message is refused, not recorded: recording it counted one mail twice.
  let stopping = false;
  // Answers still waiting out `delayMs`: a stopping server refuses them (421) instead of recording them.
  const waiting = new Map<NodeJS.Timeout, { answer: () => void; refuse: () => void }>();
  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // The worker's pool keeps connections open; the test server must not cap them.
    maxClients: 500,
    closeTimeout: serverOptions.closeTimeoutMs,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const mail = parse(Buffer.concat(chunks).toString('utf8'), from, to);
        const verdict = state.verdict(mail);
        state.attempts.push({ to, at: Date.now(), accepted: verdict.accept });
        const answer = () => {
          // Recorded only when the client hears the 250: like a server that has not committed a message
          // it could not acknowledge (the client rightly counts the attempt as failed and tries again).
          if (verdict.accept && closed.has(session.id)) {
            callback(null, 'Queued');
          } else if (verdict.accept && stopping) {
            callback(shuttingDown());
          } else if (verdict.accept) {
            state.received.push(mail);
            callback(null, state.acceptText(mail));
          } else {
            const error = new Error(verdict.message) as Error & { responseCode: number };
            error.responseCode = verdict.code;
            callback(error);
          }
        };
        const delayMs = state.delayFor(mail);
        if (delayMs > 0) {
          const timer = setTimeout(() => {
            waiting.delete(timer);
            answer();
          }, delayMs);
          waiting.set(timer, {
            answer,
            refuse: () => callback(shuttingDown()),
          });
        } else {
          answer();
        }
      });
    },
    onRcptTo(address, _session, callback) {
      const verdict = state.rcptVerdict(address.address);
      state.rcptAttempts.push({ to: address.address, accepted: verdict.accept });
      if (verdict.accept) return callback();
      const error = new Error(verdict.message) as Error & { responseCode: number };
      error.responseCode = verdict.code;
      callback(error);
    },
    onClose(session) {
      closed.add(session.id);
    },
  };
  const server = new SMTPServer(options);
  // A client that dies mid-message (a killed worker) resets its connection; that is not a server failure.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') state.serverErrors.push(error);
  });
  await new Promise<void>((resolve) => server.listen(serverOptions.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const result = state as TestSmtpServer;
  result.url = `smtp://127.0.0.1:${port}`;
  const settleWaiting = (how: 'answer' | 'refuse') => {
    for (const [timer, answers] of waiting) {
      clearTimeout(timer);
      answers[how]();
    }
    waiting.clear();
  };
  result.answerWaiting = () => settleWaiting('answer');
  result.close = () => {
    stopping = true;
    settleWaiting('refuse');
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return result;
}

/** Message-IDs received more than once. */
export function duplicateMessageIds(received: ReceivedMail[]): string[] {
  const seen = new Map<string, number>();
  for (const mail of received)
    seen.set(mail.headers['message-id'], (seen.get(mail.headers['message-id']) ?? 0) + 1);
  return [...seen].filter(([, count]) => count > 1).map(([id]) => id);
}
