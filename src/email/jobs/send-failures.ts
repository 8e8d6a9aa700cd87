import { ResendApiError } from '../delivery/resend-api-transport';

/**
 * The e-mail kind's retry policy reads a transport's failure as final: SMTP 5xx answers are permanent
 * (RFC 5321 §4.2.1), 4xx answers and network errors may pass later; the Resend API's validation error
 * is. Besides these, any PermanentJobError is.
 */
export function isPermanentSendError(error: unknown): boolean {
  if (error instanceof ResendApiError) return error.kind === 'permanent';
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

/**
 * Whether an SMTP answer is a bounce (docs/operations/email-delivery.md "Bounces"): a 5xx to RCPT TO says
 * the mailbox does not exist (hard); a 4xx that is the job's last attempt ends it unsent (soft). A 5xx to
 * DATA (content or policy) is not about the address, and neither is a failure without an SMTP answer.
 */
export function smtpBounceOf(error: unknown, lastAttempt: boolean): 'hard' | 'soft' | null {
  const { responseCode: code, command } = (error ?? {}) as { responseCode?: unknown; command?: unknown };
  if (typeof code !== 'number') return null;
  if (code >= 500 && code < 600)
    return typeof command === 'string' && /^RCPT\b/i.test(command) ? 'hard' : null;
  return code >= 400 && code < 500 && lastAttempt ? 'soft' : null;
}
