/** The domain of the default sender (`Name <user@domain>` or `user@domain`), for Message-IDs. */
export function senderDomain(mailFrom: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(mailFrom.trim());
  return match ? match[1].toLowerCase() : 'localhost';
}

/**
 * The Message-ID of a job's message: stable per job, so a receiver that sees it twice can tell it is one
 * message, and a provider event naming it leads back to the job (and its ledger entry) by the id alone.
 */
export function messageIdOf(jobId: string, domain: string): string {
  return `${jobId}@${domain}`;
}

/** The job id a Message-ID of ours names (angle brackets allowed), whatever its domain. */
export function jobIdOfMessageId(messageId: string): string {
  return messageId.replace(/^</, '').split('@')[0];
}

/**
 * Bulk-mail headers: `List-Unsubscribe` with the one-click POST of RFC 8058, so mailbox providers show an
 * unsubscribe button that works without opening a page.
 */
export function unsubscribeHeaders(unsubscribeUrl: string | undefined): Record<string, string> {
  if (!unsubscribeUrl) return {};
  return {
    'List-Unsubscribe': `<${unsubscribeUrl}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}

/** Where a broadcast message comes from, for the headers receivers group and report it by. */
export interface BroadcastSource {
  campaignId: string;
  appId: string;
  /** The sending domain (the From domain the message is signed for, or MAIL_FROM's). */
  senderDomain: string;
}

/**
 * Headers of broadcast mail (campaigns and their test copies, docs/operations/email-delivery.md "Headers
 * of broadcast mail"): `Feedback-ID` as Gmail's Postmaster Tools reads it (`campaign:app:stream:sender`,
 * the sender last), `List-Id` per app (RFC 2919) on the sending domain, and `Precedence: bulk` with
 * `Auto-Submitted: auto-generated` (RFC 3834), so auto-replies are not sent back. Names are spelled as
 * nodemailer writes them, so both ways of writing a message give the same bytes (mime-message.ts).
 */
export function broadcastHeaders(source: BroadcastSource): Record<string, string> {
  const { campaignId, appId, senderDomain } = source;
  return {
    'Feedback-ID': `${campaignId}:${appId}:broadcast:${senderDomain}`,
    'List-ID': `<${appId}.${senderDomain}>`,
    Precedence: 'bulk',
    'Auto-Submitted': 'auto-generated',
  };
}

/** RFC 5322's recommended line length, CRLF excluded. */
export const HEADER_LINE_LIMIT = 78;

/**
 * A header line of angle-bracketed URLs (`List-Unsubscribe`) folded at HEADER_LINE_LIMIT: a URL has no
 * space to fold at, so it is cut inside its brackets, where RFC 2369 says receivers ignore whitespace.
 * A field that fits is left on one line.
 */
export function foldBracketedUrls(key: string, value: string, width = HEADER_LINE_LIMIT): string {
  let line = `${key}:`;
  if (line.length + 1 + value.length <= width) return `${line} ${value}`;
  const lines: string[] = [];
  let inside = false;
  for (const char of ` ${value}`) {
    if (line.length + 1 > width && (inside || char === ' ')) {
      lines.push(line);
      line = ' ';
      if (char === ' ') continue;
    }
    line += char;
    if (char === '<') inside = true;
    else if (char === '>') inside = false;
  }
  lines.push(line);
  return lines.join('\r\n');
}

/** `"Name" <email>` for a template's sender. */
export function formatAddress(sender: { name?: string; email: string }): string {
  if (!sender.name) return sender.email;
  return `"${sender.name.replace(/["\\\r\n]/g, '')}" <${sender.email}>`;
}
