import type { BounceType } from '../tracking/schemas/email-event.schema';

/** What an inbound report says about the message its VERP address names. */
export type ReportVerdict =
  | { type: 'bounced'; bounceType: BounceType; recipient: string | null; status: string }
  | { type: 'complained'; recipient: string | null; feedbackType: string };

/** One MIME part of a received report, as the parser gives it. */
export interface ReportPart {
  contentType: string;
  content: Buffer | string;
}

/** The fields of a report block, at most this many characters read (a report is small; garbage is not). */
const REPORT_TEXT_MAX = 64 * 1024;
/** ARF feedback types that are a complaint; `not-spam` is the opposite. */
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

/** A received message as the MIME parser gives it. */
export interface ParsedReport {
  /** The `report-type` parameter of a `multipart/report` message, lower-cased; null for other messages. */
  reportType: string | null;
  /**
   * The message's text parts joined: the parser (mailparser) counts a `message/delivery-status` part as
   * text, so a DSN's fields are found here.
   */
  text: string;
  /** The parts it keeps apart (attachments): an ARF report's `message/feedback-report`, among others. */
  parts: readonly ReportPart[];
}

/**
 * Reads a delivery status notification (RFC 3464: `multipart/report; report-type=delivery-status`) or a
 * complaint in the Abuse Reporting Format (RFC 5965: a `message/feedback-report` part). Null for anything
 * else (an auto-reply, a DSN that reports only a delay or a delivery, garbage): nothing to record.
 */
export function readReport(report: ParsedReport): ReportVerdict | null {
  if (report.reportType === 'delivery-status') {
    const verdict = readDeliveryStatus(report.text.slice(0, REPORT_TEXT_MAX));
    if (verdict) return verdict;
  }
  for (const part of report.parts) {
    const type = part.contentType.toLowerCase();
    if (type === 'message/delivery-status' || type === 'message/global-delivery-status') {
      const verdict = readDeliveryStatus(textOf(part));
      if (verdict) return verdict;
    }
    if (type === 'message/feedback-report') {
      const verdict = readFeedbackReport(textOf(part));
      if (verdict) return verdict;
    }
  }
  return null;
}

/**
 * The first recipient block whose `Action` is `failed`: a 5.x.x status is a hard bounce, a 4.x.x one (the
 * remote server gave up on a temporary failure) a soft bounce. `delayed`, `delivered`, `relayed`: no bounce.
 */
function readDeliveryStatus(text: string): ReportVerdict | null {
  for (const block of fieldBlocks(text)) {
    if (block.get('action')?.toLowerCase() !== 'failed') continue;
    const status = /^([245])\.\d{1,3}\.\d{1,3}/.exec(block.get('status') ?? '')?.[0] ?? '5.0.0';
    return {
      type: 'bounced',
      bounceType: status.startsWith('4') ? 'soft' : 'hard',
      recipient: addressOf(block.get('final-recipient') ?? block.get('original-recipient')),
      status,
    };
  }
  return null;
}

function readFeedbackReport(text: string): ReportVerdict | null {
  const [fields] = fieldBlocks(text);
  const feedbackType = fields?.get('feedback-type')?.toLowerCase();
  if (!feedbackType || !COMPLAINT_TYPES.has(feedbackType)) return null;
  return {
    type: 'complained',
    recipient: addressOf(fields.get('original-rcpt-to')),
    feedbackType,
  };
}

/** The report's header-like blocks, separated by blank lines; folded lines joined; names lower-cased. */
function fieldBlocks(text: string): Map<string, string>[] {
  return text
    .slice(0, REPORT_TEXT_MAX)
    .replace(/\r\n/g, '\n')
    .replace(/\n[ \t]+/g, ' ')
    .split(/\n\s*\n/)
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
      }
      return fields;
    })
    .filter((fields) => fields.size > 0);
}

/** `rfc822; user@host` or `<user@host>` or `user@host`: the address, lower-cased, or null. */
function addressOf(value: string | undefined): string | null {
  const address = value
    ?.replace(/^[\w-]+\s*;/, '')
    .trim()
    .replace(/^<|>$/g, '')
    .toLowerCase();
  return address && /^[^\s@<>]+@[^\s@<>]+$/.test(address) ? address.slice(0, 254) : null;
}

function textOf(part: ReportPart): string {
  return typeof part.content === 'string'
    ? part.content.slice(0, REPORT_TEXT_MAX)
    : part.content.subarray(0, REPORT_TEXT_MAX).toString('utf8');
}
