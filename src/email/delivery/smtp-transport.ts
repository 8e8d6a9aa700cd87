import { connect, type Socket } from 'node:net';
import { createTransport, type Transporter } from 'nodemailer';
import SMTPPool from 'nodemailer/lib/smtp-pool';
import type { EmailStream } from '../jobs/schemas/email-job.schema';
import { toNodemailer, type DeliveryReceipt, type MailTransport, type OutgoingMail } from './mail-transport';

/** nodemailer's own waits, one per stage of the conversation; the send limit bounds their sum. */
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

export interface SmtpTransportOptions {
  /** The most one send may take, connecting included; past it the attempt fails and the pool is replaced. */
  sendTimeoutMs: number;
}

/** A send that outlived the limit. Whether the server took the message is unknown; the job is retried. */
export class SmtpSendTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/**
 * A failure without an SMTP answer (refused, reset, timed out, TLS): the connection is at fault, not the
 * message, and the pool's other connections to that server are most likely dead as well.
 */
const isConnectionFault = (error: unknown) =>
  typeof (error as { responseCode?: unknown } | null)?.responseCode !== 'number';

/**
 * nodemailer's codes (and Node's, in case one passes through) for a server that could not be reached or
 * stopped answering. Its other codes without an SMTP answer (`EENVELOPE`, `EMESSAGE`, `ESTREAM`, `EAUTH`
 * without a reply) are about the message or our settings: another attempt of the same job decides those.
 */
const UNREACHABLE_CODES = new Set([
  'ECONNECTION',
  'ESOCKET',
  'ETIMEDOUT',
  'EDNS',
  'ETLS',
  'EPROTOCOL',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
]);

const addresses = (list: unknown[] | undefined) =>
  (list ?? []).map((entry) =>
    typeof entry === 'string' ? entry : String((entry as { address?: string }).address),
  );

/** A send under way: settled once, by its answer or by the sweep when its deadline has passed. */
interface PendingSend {
  expiresAt: number;
  settled: boolean;
  resolve: (info: SMTPPool.SentMessageInfo) => void;
  reject: (error: Error) => void;
}

/**
 * The send limit of every send of a pool, kept by one timer that sweeps the sends under way (a timer, a
 * race and their promises per send were a visible share of the worker's CPU in the campaign bench). Sends
 * start in deadline order, so a sweep stops at the first one still in time. A send fails between `ms` and
 * `ms` + one sweep period (a tenth of the limit, at most a second) after it started; the timer runs only
 * while sends are under way and never keeps the process alive.
 */
class SendDeadlines {
  private readonly pending = new Set<PendingSend>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ms: number) {}

  /** `send` with a callback for its answer, settled by that answer or failed at the limit. */
  run(send: (done: (error: Error | null, info: SMTPPool.SentMessageInfo) => void) => void) {
    return new Promise<SMTPPool.SentMessageInfo>((resolve, reject) => {
      const entry: PendingSend = { expiresAt: Date.now() + this.ms, settled: false, resolve, reject };
      this.pending.add(entry);
      this.timer ??= setInterval(() => this.sweep(), Math.min(1_000, Math.max(10, this.ms / 10))).unref();
      send((error, info) => {
        // An answer after the limit is dropped: the send has already failed.
        if (entry.settled) return;
        this.settle(entry);
        if (error) reject(error);
        else resolve(info);
      });
    });
  }

  private sweep(): void {
    const now = Date.now();
    for (const entry of this.pending) {
      if (entry.expiresAt > now) break;
      this.settle(entry);
      entry.reject(new SmtpSendTimeoutError(`No SMTP answer within ${this.ms} ms`));
    }
  }

  private settle(entry: PendingSend): void {
    entry.settled = true;
    this.pending.delete(entry);
    if (this.pending.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

/**
 * Sends what is written to the socket during one event-loop turn as one write (`cork` at the first write,
 * `uncork` once the turn's I/O callbacks have run). nodemailer pipes a message into the socket as dozens
 * of small chunks (headers, each encoded line block, the dot-escaping stream's pieces); without Nagle each
 * was a syscall and a TCP segment of its own, the largest share of the worker's CPU in the campaign bench.
 */
function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write(...args);
  };
}

type GetSocketCallback = (error: Error | null, socketOptions?: { connection: Socket }) => void;

/**
 * One generation of pooled connections. After a connection fault the transport starts a new one and
 * retires this one: it is closed, its sockets destroyed, once the sends it had taken have ended (each
 * within the send limit), so a connection stuck on a silent server cannot hold a pool slot for good.
 */
class SmtpPool {
  readonly transporter: Transporter<SMTPPool.SentMessageInfo>;
  /** The plain `smtp://` sockets opened for this pool (nodemailer opens `smtps://` ones itself). */
  private readonly sockets = new Set<Socket>();
  private sending = 0;
  private onRetired?: () => void;
  private readonly deadlines: SendDeadlines;

  constructor(url: string, maxConnections: number, sendTimeoutMs: number) {
    this.deadlines = new SendDeadlines(sendTimeoutMs);
    const plain = url.startsWith('smtp://');
    const getSocket = (options: { host?: string; port?: number }, callback: GetSocketCallback) =>
      callback(null, { connection: this.openSocket(options.host ?? 'localhost', options.port ?? 25) });
    this.transporter = createTransport(
      new SMTPPool({
        url,
        maxConnections,
        maxMessages: Infinity,
        ...SMTP_TIMEOUTS,
        ...(plain ? { getSocket } : {}),
      } as SMTPPool.Options),
    );
  }

  async send(mail: OutgoingMail): Promise<SMTPPool.SentMessageInfo> {
    this.sending++;
    try {
      return await this.deadlines.run((done) => this.transporter.sendMail(toNodemailer(mail), done));
    } finally {
      this.sending--;
      if (this.onRetired && this.sending === 0) this.destroy();
    }
  }

  /** No new sends come here; closed once those under way have ended. */
  retire(onClosed: () => void): void {
    this.onRetired = onClosed;
    if (this.sending === 0) this.destroy();
  }

  /** At shutdown: idle connections are closed; one still waiting on a server does not keep the process. */
  close(): void {
    this.transporter.close();
    for (const socket of this.sockets) socket.unref();
  }

  destroy(): void {
    this.transporter.close();
    for (const socket of this.sockets) socket.destroy();
    this.onRetired?.();
  }

  /**
   * A plain socket with TCP_NODELAY and coalesced writes, handed to nodemailer while still connecting:
   * every failure of it (refused, reset, timed out) is then nodemailer's own socket error, which takes the
   * connection out of the pool. Reporting a connect error through the `getSocket` callback instead left
   * the pool holding the failed connection as busy; with every slot so lost, no send was ever answered.
   */
  private openSocket(host: string, port: number): Socket {
    const socket = connect({ host, port, noDelay: true, keepAlive: true });
    coalesceWrites(socket);
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    // nodemailer listens from the same turn on; this only keeps an error before that from being thrown.
    socket.on('error', () => undefined);
    return socket;
  }
}

/**
 * One stream's pool and the generations it retired. A send that fails without an SMTP answer (the server
 * refused, reset or never answered) replaces the pool, so sending resumes by itself once the server is back.
 */
class ReplaceablePool {
  private pool: SmtpPool;
  private readonly retiring = new Set<SmtpPool>();

  constructor(
    private readonly url: string,
    private readonly maxConnections: number,
    private readonly sendTimeoutMs: number,
  ) {
    this.pool = new SmtpPool(url, maxConnections, sendTimeoutMs);
  }

  async send(mail: OutgoingMail): Promise<SMTPPool.SentMessageInfo> {
    const pool = this.pool;
    try {
      return await pool.send(mail);
    } catch (error) {
      // Once per generation: the sends that failed with it must not each replace its successor.
      if (isConnectionFault(error) && pool === this.pool) this.replace();
      throw error;
    }
  }

  close(): void {
    this.pool.close();
    for (const pool of this.retiring) pool.destroy();
  }

  private replace(): void {
    const old = this.pool;
    this.pool = new SmtpPool(this.url, this.maxConnections, this.sendTimeoutMs);
    this.retiring.add(old);
    old.retire(() => this.retiring.delete(old));
  }
}

/**
 * Pooled SMTP, one pool per stream (docs/operations/email-delivery.md, "Streams"): each stream's
 * connections are kept open and reused for its messages only, so a campaign that holds every broadcast
 * connection never makes a sign-in link wait for one. Plain `smtp://` sockets disable Nagle's algorithm:
 * SMTP is a conversation of small writes, and Nagle holding one back until the previous is acknowledged
 * costs a delayed-ACK wait per message. Faults are ordinary failed attempts: every send ends within
 * `sendTimeoutMs`, and a connection fault replaces the pool of the stream that met it.
 */
export class SmtpTransport implements MailTransport {
  readonly provider = 'smtp';
  readonly dependency = 'SMTP server';
  /** SMTP has no idempotency: a message sent again is delivered again. */
  readonly idempotent = false;
  private readonly pools: Record<EmailStream, ReplaceablePool>;

  /** `connections`: each stream's pool size (its worker slots: more could never be busy at once). */
  constructor(url: string, connections: Record<EmailStream, number>, options: SmtpTransportOptions) {
    this.pools = {
      transactional: new ReplaceablePool(url, connections.transactional, options.sendTimeoutMs),
      broadcast: new ReplaceablePool(url, connections.broadcast, options.sendTimeoutMs),
    };
  }

  async send(mail: OutgoingMail): Promise<DeliveryReceipt> {
    const info = await this.pools[mail.stream ?? 'transactional'].send(mail);
    return {
      accepted: addresses(info.accepted),
      rejected: addresses(info.rejected),
      response: String(info.response),
    };
  }

  /** No SMTP reply, and a code that says the server was unreachable: an outage, not the message's fate. */
  unreachable(error: unknown): boolean {
    const code = (error as { code?: unknown } | null)?.code;
    return isConnectionFault(error) && typeof code === 'string' && UNREACHABLE_CODES.has(code);
  }

  onApplicationShutdown(): void {
    for (const pool of Object.values(this.pools)) pool.close();
  }
}
