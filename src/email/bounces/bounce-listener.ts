import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AppConfig } from '../../config/env';
import { BounceReports } from '../events/bounce-reports';
import { readReport, type ReportVerdict } from './inbound-report';
import { VerpAddresses } from './verp';

/** Recipients per inbound message: a bounce goes to one VERP address; a few allow for a relay's habits. */
const MAX_RECIPIENTS = 10;
/** Connections at once: bounce traffic arrives from one relay, a handful of connections at most. */
const MAX_CLIENTS = 50;

type SmtpError = Error & { responseCode: number };
const smtpError = (responseCode: number, message: string): SmtpError =>
  Object.assign(new Error(message), { responseCode });

/**
 * The inbound SMTP listener for bounce reports (docs/operations/email-delivery.md "Bounces"), on
 * BOUNCE_SMTP_HOST:BOUNCE_SMTP_PORT when the port is set. It takes mail only for valid VERP addresses (550
 * otherwise, at RCPT), at most BOUNCE_MAX_MESSAGE_BYTES per message (552), closes a connection silent for
 * BOUNCE_SMTP_TIMEOUT_MS, and reads each message as a DSN or an ARF complaint about the message its VERP
 * address names, recorded like a provider webhook's event (BounceReports). A message it cannot read is
 * accepted and dropped (a relay must not retry garbage); a failure to record is a 451, so the relay retries.
 */
@Injectable()
export class BounceListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BounceListener.name);
  private server: SMTPServer | null = null;

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly verp: VerpAddresses,
    private readonly reports: BounceReports,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.get('BOUNCE_SMTP_PORT', { infer: true });
    if (port === undefined) return;
    const host = this.config.get('BOUNCE_SMTP_HOST', { infer: true });
    this.server = this.createServer();
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => {
        this.server!.off('error', reject);
        resolve();
      });
    });
    this.logger.log(`Bounce listener on ${host}:${this.port()}`);
  }

  /** The bound port (port 0 in tests binds a free one). */
  port(): number | null {
    return (this.server?.server.address() as AddressInfo | null)?.port ?? null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private createServer(): SMTPServer {
    const maxBytes = this.config.get('BOUNCE_MAX_MESSAGE_BYTES', { infer: true });
    const timeoutMs = this.config.get('BOUNCE_SMTP_TIMEOUT_MS', { infer: true });
    const server = new SMTPServer({
      name: this.config.get('BOUNCE_DOMAIN', { infer: true }) ?? 'localhost',
      // Bounce mail comes from the relay in front of it, unauthenticated, over the local network.
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      size: maxBytes,
      maxClients: MAX_CLIENTS,
      socketTimeout: timeoutMs,
      closeTimeout: Math.min(timeoutMs, 5_000),
      logger: false,
      onRcptTo: (address, session, callback) => {
        if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
          return callback(smtpError(452, '4.5.3 Too many recipients'));
        }
        if (!this.verp.jobOf(address.address)) {
          return callback(smtpError(550, '5.1.1 No such bounce address'));
        }
        callback();
      },
      onData: (stream, session, callback) => {
        this.receive(stream, session, maxBytes).then(
          () => callback(null),
          (error: SmtpError) => callback(error),
        );
      },
    });
    server.on('error', (error: NodeJS.ErrnoException) => {
      // A peer that vanishes mid-conversation is its own business, not the listener's.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') {
        this.logger.warn(`Bounce listener: ${error.message}`);
      }
    });
    return server;
  }

  private async receive(stream: SMTPServerDataStream, session: SMTPServerSession, maxBytes: number) {
    const raw = await readCapped(stream, maxBytes);
    if (stream.sizeExceeded || raw === null) {
      throw smtpError(552, `5.3.4 Message larger than ${maxBytes} bytes`);
    }
    let verdict: ReportVerdict | null = null;
    try {
      const parsed = await simpleParser(raw, {
        skipHtmlToText: true,
        skipTextToHtml: true,
        skipImageLinks: true,
      });
      const contentType = parsed.headers.get('content-type') as
        { value?: string; params?: Record<string, string> } | undefined;
      verdict = readReport({
        reportType:
          contentType?.value?.toLowerCase() === 'multipart/report'
            ? (contentType.params?.['report-type']?.toLowerCase() ?? null)
            : null,
        text: parsed.text ?? '',
        parts: parsed.attachments,
      });
    } catch (error) {
      this.logger.warn(`Bounce listener: unreadable message dropped (${(error as Error).message})`);
      return;
    }
    if (!verdict) return;
    const jobIds = new Set(session.envelope.rcptTo.flatMap(({ address }) => this.verp.jobOf(address) ?? []));
    try {
      for (const jobId of jobIds) await this.record(jobId, verdict);
    } catch (error) {
      this.logger.error(`Bounce listener: report not recorded: ${(error as Error).message}`);
      throw smtpError(451, '4.3.0 Report not recorded; try again later');
    }
  }

  private async record(jobId: string, verdict: ReportVerdict): Promise<void> {
    const kind = verdict.type === 'bounced' ? `bounced:${verdict.bounceType}` : 'complained';
    const outcome = await this.reports.report({
      jobId,
      type: verdict.type,
      ...(verdict.type === 'bounced' ? { bounceType: verdict.bounceType } : {}),
      // One report of a kind per message: the same DSN delivered twice (or a relay's second copy) is one.
      key: `inbound:${jobId}:${kind}`,
      occurredAt: new Date(),
      to: verdict.recipient,
    });
    if (!outcome) this.logger.warn(`Bounce listener: ${kind} report for job ${jobId}: no such message`);
  }
}

/** The whole stream, or null once it passes `maxBytes` (the rest is read and dropped). */
async function readCapped(stream: Readable, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
  }
  return size <= maxBytes ? Buffer.concat(chunks) : null;
}
