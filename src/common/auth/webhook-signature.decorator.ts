import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { AcceptsBody } from '../http/body/body-policy';
import { ApiErrors } from '../swagger/envelope.decorators';
import { AUTH_POLICY, type AuthPolicy } from './auth-policy';
import { callerDecorator } from './caller';

/**
 * A provider webhook route, authenticated in the format EMAIL_PROVIDER names by the `webhook-signature`
 * strategy (src/email/events/webhook-signature.strategy.ts) before its body is trusted. Unsigned, stale,
 * replayed or forged → 401; the provider's secret not set → 401. On handlers only (it declares the route's
 * raw body).
 */
export function WebhookSignature() {
  const policy: AuthPolicy = { credential: 'webhook-signature' };
  const header = (name: string, description: string) => ApiHeader({ name, required: false, description });
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    // The signature covers the bytes as sent: keep them.
    AcceptsBody({ rawBody: true }),
    header('webhook-id', 'Resend: message id (or svix-id)'),
    header('webhook-timestamp', 'Resend: Unix seconds when the message was signed (or svix-timestamp)'),
    header('webhook-signature', 'Resend: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` (or svix-signature)'),
    header('x-twilio-email-event-webhook-signature', 'SendGrid: base64 ECDSA signature of timestamp + body'),
    header('x-twilio-email-event-webhook-timestamp', 'SendGrid: Unix seconds when the request was signed'),
    ApiErrors(HttpStatus.UNAUTHORIZED),
  );
}

/**
 * `@SignedWebhook() message` on a `@WebhookSignature()` route: what the strategy verified (for provider
 * webhooks, `VerifiedWebhook` of src/email/events/providers/provider-format.ts).
 */
export const SignedWebhook = callerDecorator('webhook-signature', 'SignedWebhook');
