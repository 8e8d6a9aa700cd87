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
