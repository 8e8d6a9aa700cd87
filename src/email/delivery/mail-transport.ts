import type { KeyObject } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTransport, type SendMailOptions } from 'nodemailer';
import type { EmailStream } from '../jobs/schemas/email-job.schema';
import { PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from '../../common/storage/private-directory';
import { foldBracketedUrls } from './message-headers';
import { BRACKETED_URL_HEADERS, rawMimeOf } from './mime-message';

/** A message ready to leave: rendered, addressed, with its final headers. */
export interface OutgoingMail {
  /** Without angle brackets; the header is `Message-ID: <messageId>`. */
  messageId: string;
  /**
   * Names this message for every attempt of its job: a transport that can pass it to the provider
   * (`idempotent`) makes a repeated send of it a no-op there.
   */
  idempotencyKey: string;
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  headers: Record<string, string>;
  /**
   * Headers sent exactly as given: a provider's structured ones (SendGrid's JSON `X-SMTPAPI`), which
   * nodemailer would otherwise encode as MIME words the provider does not decode. Plain ASCII, one line.
   */
  preparedHeaders?: Record<string, string>;
  /** Its job's stream: the SMTP transport sends it on that stream's pool (absent: `transactional`). */
  stream?: EmailStream;
  /** The envelope sender (bounces), when it differs from From: the sender domain's return-path host. */
  envelopeFrom?: string;
  /** Signs the message (SMTP and the outbox; an API provider signs with its own key). */
  dkim?: { domainName: string; keySelector: string; privateKey: KeyObject };
}

/**
 * The headers a DKIM signature covers: RFC 8058 asks that List-Unsubscribe and its one-click companion be
 * signed, so no relay can replace the link. Listed once each; a header the message lacks is signed as absent.
 */
export const DKIM_SIGNED_HEADERS =
  'From:Subject:Date:Message-ID:To:Reply-To:List-Unsubscribe:List-Unsubscribe-Post:MIME-Version:Content-Type';

export interface DeliveryReceipt {
  accepted: string[];
  rejected: string[];
  response: string;
  /** The provider's own id for the message, when it answers with one (Resend's `id`). */
  providerMessageId?: string;
}

export interface MailTransport {
  /** Recorded on the job's result: `smtp`, `resend-api` or `outbox`. */
  readonly provider: string;
  /** What an outage is reported as unavailable (`SMTP server`, `Resend API`). */
  readonly dependency: string;
  /**
   * Whether sending the same message again is safe (the provider drops a repeat of its idempotency key):
   * then a job whose outcome is unknown after a crash is retried instead of ending `dead`.
   */
  readonly idempotent: boolean;
  send(mail: OutgoingMail): Promise<DeliveryReceipt>;
  /**
   * Whether a failed send is an outage, not the message's fate: the server was never reached (refused,
   * reset, no answer), or it takes no message for now (an API's 429 or 5xx). Absent: every failure is the
   * message's.
   */
  unreachable?(error: unknown): boolean;
  /** Nest calls it last at shutdown, after the worker has drained (pooled connections are closed). */
  onApplicationShutdown(): void;
}

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

/**
 * The message as nodemailer's `sendMail` takes it: the common message as its finished text (mime-message.ts,
 * the same bytes nodemailer would compose), any other for nodemailer to compose.
 */
export function toNodemailer(mail: OutgoingMail): SendMailOptions {
  const raw = rawMimeOf(mail);
  const options =
    raw === null
      ? composedMail(mail)
      : { messageId: `<${mail.messageId}>`, from: mail.from, to: mail.to, raw };
  if (mail.envelopeFrom) options.envelope = { from: mail.envelopeFrom, to: mail.to };
  if (mail.dkim) {
    // nodemailer hands the key to node's `Sign.sign`, which takes a parsed KeyObject; its type
    // declarations list only PEM text, which would be parsed again for every message.
    const privateKey = mail.dkim.privateKey as unknown as string;
    options.dkim = { ...mail.dkim, privateKey, headerFieldNames: DKIM_SIGNED_HEADERS };
  }
  return options;
}

/** The message for nodemailer to compose. */
export const composedMail = (mail: OutgoingMail): SendMailOptions => ({
  messageId: `<${mail.messageId}>`,
  from: mail.from,
  to: mail.to,
  replyTo: mail.replyTo,
  subject: mail.subject,
  html: mail.html,
  text: mail.text,
  headers: {
    ...Object.fromEntries(Object.entries(mail.headers).map(([name, value]) => [name, headerOf(name, value)])),
    ...Object.fromEntries(
      Object.entries(mail.preparedHeaders ?? {}).map(([name, value]) => [name, { prepared: true, value }]),
    ),
  },
  textEncoding: textEncodingOf(mail),
});

/** A bracketed URL list folded as the fast path folds it (RFC 5322's 78 characters); others as given. */
function headerOf(name: string, value: string): string | { prepared: true; value: string } {
  if (!BRACKETED_URL_HEADERS.has(name) || !value.trim()) return value;
  return { prepared: true, value: foldBracketedUrls(name, value).slice(name.length + 2) };
}

/** Without `SMTP_URL`: each message is written as an `.eml` file a developer can open in a mail client. */
export class OutboxTransport implements MailTransport {
  readonly provider = 'outbox';
  readonly dependency = 'outbox directory';
  /** A repeat writes a second file: a developer's copy, never a second delivery, but not a no-op either. */
  readonly idempotent = false;
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
