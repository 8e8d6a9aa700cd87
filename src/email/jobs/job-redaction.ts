/** What a job view shows in place of a secret or a rendered body. */
export const REDACTED = '[redacted]';

/**
 * Message fields no view returns: sealed secrets, rendered bodies (a transactional body may hold a link
 * that acts for its recipient: sign-in, confirmation, unsubscribe) and unsubscribe links themselves,
 * which would let a reader unsubscribe the recipient.
 */
const REDACTED_FIELDS = ['sealed', 'html', 'text', 'unsubscribeUrl'] as const;

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function redactFields(fields: Fields): Fields {
  const copy = { ...fields };
  for (const field of REDACTED_FIELDS) {
    if (copy[field] !== undefined && copy[field] !== null) copy[field] = REDACTED;
  }
  return copy;
}

/** A message with the fields above redacted, in itself and in its template variables. */
function redactMessage(message: Fields): Fields {
  const redacted = redactFields(message);
  if (isFields(redacted.variables)) redacted.variables = redactFields(redacted.variables);
  return redacted;
}

/**
 * A job's payload as the back office may read it (`GET /admin/email-jobs…`): an `email.send` message, or
 * the message a `recipients` batch plan sends, redacted as above. Recipient, subject, template, campaign
 * and the rest stay readable for troubleshooting.
 */
export function redactPayload(payload: Fields): Fields {
  const redacted = redactMessage(payload);
  if (isFields(redacted.message)) redacted.message = redactMessage(redacted.message);
  return redacted;
}
