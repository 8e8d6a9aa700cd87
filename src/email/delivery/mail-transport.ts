import { mkdir, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createTransport, type Transporter } from 'nodemailer';
import SMTPPool from 'nodemailer/lib/smtp-pool';
import { PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from '../../common/storage/private-directory';

/** A message ready to leave: rendered, addressed, with its final headers. */
export interface OutgoingMail {
  /** Without angle brackets; the header is `Message-ID: <messageId>`. */
  messageId: string;
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  headers: Record<string, string>;
}

export interface DeliveryReceipt {
  accepted: string[];
  rejected: string[];
  response: string;
}

export interface MailTransport {
  /** Recorded on the job's result: `smtp` or `outbox`. */
  readonly provider: string;
  send(mail: OutgoingMail): Promise<DeliveryReceipt>;
  /** Nest calls it last at shutdown, after the worker has drained (pooled connections are closed). */
  onApplicationShutdown(): void;
}

/** Bounds every SMTP wait well inside a job's lease, so a live worker always finishes what it claimed. */
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/** Printable ASCII, tabs and line breaks: text that nodemailer encodes quoted-printable when it chooses. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/**
 * For plain-ASCII content the transfer encoding is named up front: nodemailer would otherwise choose it by
 * counting the characters of each part in a JavaScript loop, about a tenth of its work per campaign message
 * (a native regular expression answers the same question in a fraction of that). Other text is left to it.
 */
const textEncodingOf = (mail: OutgoingMail): 'quoted-printable' | undefined =>
  PLAIN_ASCII.test(mail.subject) && PLAIN_ASCII.test(mail.html ?? '') && PLAIN_ASCII.test(mail.text ?? '')
    ? 'quoted-printable'
    : undefined;

const toNodemailer = (mail: OutgoingMail) => ({
  messageId: `<${mail.messageId}>`,
  from: mail.from,
  to: mail.to,
  replyTo: mail.replyTo,
  subject: mail.subject,
  html: mail.html,
  text: mail.text,
  headers: mail.headers,
  textEncoding: textEncodingOf(mail),
});

const addresses = (list: unknown[] | undefined) =>
  (list ?? []).map((entry) =>
    typeof entry === 'string' ? entry : String((entry as { address?: string }).address),
  );

type GetSocketCallback = (
  error: Error | null,
  socketOptions?: { connection: ReturnType<typeof connect> },
) => void;

/**
 * Opens the pool's TCP connection with TCP_NODELAY and writes coalesced per event-loop turn; nodemailer
 * takes it as an already open connection.
 */
function connectWithoutNagle(options: { host?: string; port?: number }, callback: GetSocketCallback): void {
  const socket = connect({ host: options.host ?? 'localhost', port: options.port ?? 25, noDelay: true });
  coalesceWrites(socket);
  const fail = (error: Error) => callback(error);
  socket.once('error', fail);
  socket.setTimeout(SMTP_TIMEOUTS.connectionTimeout, () =>
    socket.destroy(new Error(`SMTP connection to ${options.host}:${options.port} timed out`)),
  );
  socket.once('connect', () => {
    socket.off('error', fail);
    socket.setTimeout(0);
    socket.setKeepAlive(true);
    callback(null, { connection: socket });
  });
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

/**
 * Pooled SMTP: `maxConnections` connections kept open and reused for every message. Plain `smtp://`
 * sockets disable Nagle's algorithm: SMTP is a conversation of small writes, and Nagle holding one back
 * until the previous is acknowledged costs a delayed-ACK wait per message.
 */
export class SmtpTransport implements MailTransport {
  readonly provider = 'smtp';
  private readonly transporter: Transporter<SMTPPool.SentMessageInfo>;

  constructor(url: string, maxConnections: number) {
    const plain = url.startsWith('smtp://');
    const pool = new SMTPPool({
      url,
      maxConnections,
      maxMessages: Infinity,
      ...SMTP_TIMEOUTS,
      ...(plain ? { getSocket: connectWithoutNagle } : {}),
    } as SMTPPool.Options);
    this.transporter = createTransport(pool);
  }

  async send(mail: OutgoingMail): Promise<DeliveryReceipt> {
    const info = await this.transporter.sendMail(toNodemailer(mail));
    return {
      accepted: addresses(info.accepted),
      rejected: addresses(info.rejected),
      response: String(info.response),
    };
  }

  onApplicationShutdown(): void {
    this.transporter.close();
  }
}

/** Without `SMTP_URL`: each message is written as an `.eml` file a developer can open in a mail client. */
export class OutboxTransport implements MailTransport {
  readonly provider = 'outbox';
  private readonly transporter = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(private readonly directory: string) {}

  async send(mail: OutgoingMail): Promise<DeliveryReceipt> {
    const info = await this.transporter.sendMail(toNodemailer(mail));
    await mkdir(this.directory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    const file = join(this.directory, `${Date.now()}-${mail.messageId.replace(/[^\w.@-]/g, '_')}.eml`);
    await writeFile(file, info.message as Buffer, { mode: PRIVATE_FILE_MODE });
    return { accepted: [mail.to], rejected: [], response: `written to ${file}` };
  }

  onApplicationShutdown(): void {
    this.transporter.close();
  }
}
