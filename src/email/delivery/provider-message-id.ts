/**
 * The provider's own id of a message, as its SMTP server names it in the answer to the message:
 * - Amazon SES: `250 Ok <message id>`, which its events call `mail.messageId`;
 * - SendGrid: `250 Ok: queued as <X-Message-Id>`, the start of its events' `sg_message_id`;
 * - Postmark and others that answer `… queued as <id>`.
 * Mailgun answers without an id (its events name our own Message-ID). Null when the answer names none.
 * SendGrid's ids are URL-safe base64, so one may begin with `-` or `_`.
 */
export function providerMessageIdOf(response: unknown): string | null {
  if (typeof response !== 'string') return null;
  const match = /^250[ -](?:[\d.]+ )?Ok(?::? queued as)?:? ([\w-][\w.@+=-]{5,200})\s*$/i.exec(
    response.trim(),
  );
  return match ? match[1] : null;
}

/**
 * The custom argument (SendGrid) or metadata key (Postmark) that carries our Message-ID into their events.
 */
export const MESSAGE_ID_ARGUMENT = 'app_message_id';

/**
 * Headers asking the provider to pass our Message-ID back in every event, where its events would otherwise
 * name its own id only: SendGrid's open and click events carry no `smtp-id` but do carry the custom
 * arguments of `X-SMTPAPI`; Postmark's events carry the `Metadata` given as `X-PM-Metadata-*` headers. Both
 * providers remove these headers before the message goes out. SES and Mailgun name our Message-ID already.
 */
export function providerHeaders(provider: string, messageId: string): Record<string, string> {
  if (provider === 'sendgrid') {
    return { 'X-SMTPAPI': JSON.stringify({ unique_args: { [MESSAGE_ID_ARGUMENT]: messageId } }) };
  }
  if (provider === 'postmark') return { [`X-PM-Metadata-${MESSAGE_ID_ARGUMENT}`]: messageId };
  return {};
}
