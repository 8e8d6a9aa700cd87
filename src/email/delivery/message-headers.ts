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

/** `"Name" <email>` for a template's sender. */
export function formatAddress(sender: { name?: string; email: string }): string {
  if (!sender.name) return sender.email;
  return `"${sender.name.replace(/["\\\r\n]/g, '')}" <${sender.email}>`;
}
