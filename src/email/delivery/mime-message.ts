import { randomBytes } from 'node:crypto';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import { wrap } from 'nodemailer/lib/qp';
import { foldBracketedUrls } from './message-headers';

/**
 * The RFC 5322 text of the common message, built as one string: a text and an HTML part (`multipart/
 * alternative`), every field plain ASCII, simple addresses, the bulk-mail headers. It is byte for byte what
 * nodemailer's composer writes for the same mail, boundary and date (mime-message.spec.ts compares them
 * over a corpus), without its tree of MIME nodes and the chain of streams each part is encoded through,
 * which were the largest share of a campaign message's CPU. Any other mail is left to nodemailer
 * (`rawMimeOf` gives null).
 */

/** Tab, line breaks and printable ASCII: no part or header of the fast path needs another character. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;
/** A header value on one line (a line break in a header would be nodemailer's to replace). */
const ONE_LINE_ASCII = /^[\t\x20-\x7e]*$/;
/** An address nodemailer writes back unchanged but for the domain's case. */
const SIMPLE_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*$/;
/** `Name <address>` or `"Name" <address>` with a name of words only, which nodemailer writes unquoted. */
const NAMED_ADDRESS = /^(?:"(\w+(?: \w+)*)"|(\w+(?: \w+)*)) <([^<>\s]+)>$/;
/** Custom headers whose names nodemailer writes as given (it normalises the case of others). */
const PLAIN_HEADERS = new Set([
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'Feedback-ID',
  'List-ID',
  'Precedence',
  'Auto-Submitted',
]);
/** Folded inside their brackets (foldBracketedUrls); nodemailer gets them prepared the same way. */
export const BRACKETED_URL_HEADERS = new Set(['List-Unsubscribe']);
/** nodemailer's limit for a header or QP line, and the line past which a text part is no longer 7bit. */
const LINE_LENGTH = 76;
const LONG_LINE = new RegExp(`^.{${LINE_LENGTH + 1},}`, 'm');
/** nodemailer does not look for long lines in longer text (it assumes there are). */
const LONG_LINE_SCAN_LIMIT = 128 * 1024;

/** The fields of a mail the text is built from (mail-transport.ts's `OutgoingMail`). */
export interface MimeMail {
  messageId: string;
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  html?: string;
  text?: string;
  headers: Record<string, string>;
  /** Headers written as given (a provider's custom arguments): nodemailer composes such a message. */
  preparedHeaders?: Record<string, string>;
}

/** How a message of the fast path is written: its boundary's random part and its date (for the tests). */
export interface MimeOptions {
  baseBoundary?: string;
  date?: Date;
}

/** The message's text for nodemailer's `raw`, or null when nodemailer must compose it. */
export function rawMimeOf(mail: MimeMail, options: MimeOptions = {}): string | null {
  const { html, text } = mail;
  if (mail.preparedHeaders && Object.keys(mail.preparedHeaders).length > 0) return null;
  if (!html || !text || !PLAIN_ASCII.test(html) || !PLAIN_ASCII.test(text)) return null;
  const from = mailbox(mail.from);
  const to = mailbox(mail.to);
  const replyTo = mail.replyTo === undefined ? undefined : mailbox(mail.replyTo);
  if (from === null || to === null || replyTo === null) return null;
  if (!ONE_LINE_ASCII.test(mail.subject) || !/^[^<>\s]+$/.test(mail.messageId)) return null;
  const lines: string[] = [];
  for (const [key, value] of Object.entries(mail.headers)) {
    if (!PLAIN_HEADERS.has(key) || !ONE_LINE_ASCII.test(value)) return null;
    // nodemailer drops a header whose value is blank.
    if (!value.trim()) continue;
    lines.push(BRACKETED_URL_HEADERS.has(key) ? foldBracketedUrls(key, value) : headerLine(key, value));
  }
  lines.push(headerLine('From', from), headerLine('To', to));
  if (replyTo) lines.push(headerLine('Reply-To', replyTo));
  // nodemailer writes no Subject for an empty one, and no header whose value is blank.
  if (mail.subject.trim()) lines.push(headerLine('Subject', mail.subject));
  const boundary = `--_NmP-${options.baseBoundary ?? randomBytes(8).toString('hex')}-Part_1`;
  lines.push(
    headerLine('Message-ID', `<${mail.messageId}>`),
    headerLine('Date', dateOf(options.date ?? new Date())),
    'MIME-Version: 1.0',
    headerLine('Content-Type', `multipart/alternative; boundary="${boundary}"`),
  );
  return (
    `${lines.join('\r\n')}\r\n\r\n` +
    `--${boundary}\r\n${part('text/plain', text)}` +
    `\r\n--${boundary}\r\n${part('text/html', html)}` +
    `\r\n--${boundary}--\r\n`
  );
}

const headerLine = (key: string, value: string) => foldLines(`${key}: ${value}`, LINE_LENGTH);

/**
 * An address as nodemailer writes it (the domain lower-cased), or null for one it would rewrite otherwise.
 */
function mailbox(value: string): string | null {
  if (SIMPLE_ADDRESS.test(value)) return lowerCaseDomain(value);
  const named = NAMED_ADDRESS.exec(value);
  if (!named || !SIMPLE_ADDRESS.test(named[3])) return null;
  return `${named[1] ?? named[2]} <${lowerCaseDomain(named[3])}>`;
}

function lowerCaseDomain(address: string): string {
  const at = address.lastIndexOf('@');
  return address.slice(0, at + 1) + address.slice(at + 1).toLowerCase();
}

/** The date as nodemailer writes it, formatted once per second (a campaign sends hundreds in one). */
let lastDate = { second: NaN, text: '' };
function dateOf(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastDate.second) {
    lastDate = { second, text: date.toUTCString().replace(/GMT/, '+0000') };
  }
  return lastDate.text;
}

/**
 * A text part: 7bit when no line is longer than nodemailer's limit, else quoted-printable (its encoding of
 * plain ASCII, in one pass: `=` and a space or tab before a line break or at the end are escaped).
 */
function part(type: 'text/plain' | 'text/html', content: string): string {
  const sevenBit = content.length <= LONG_LINE_SCAN_LIMIT && !LONG_LINE.test(content);
  const encoding = sevenBit ? '7bit' : 'quoted-printable';
  const body = sevenBit ? content : wrap(content.replace(QP_ESCAPED, qpEscape), LINE_LENGTH);
  return `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n${body}`;
}

const QP_ESCAPED = /=|[ \t](?=[\r\n]|$)/g;
const qpEscape = (char: string) => (char === '=' ? '=3D' : char === ' ' ? '=20' : '=09');
