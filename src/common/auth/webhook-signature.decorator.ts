import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { AcceptsBody } from '../http/body/body-policy';
import { ApiErrors } from '../swagger/envelope.decorators';
import { AUTH_POLICY, type AuthPolicy } from './auth-policy';
import { callerDecorator } from './caller';

/** A provider webhook message whose Standard Webhooks signature checked out. */
export interface SignedWebhookMessage {
  /** `webhook-id`: the provider's message id, the same on every retry of one message. */
  id: string;
  /** `webhook-timestamp`, within the tolerance of the server's clock. */
  timestamp: Date;
  /** The parsed JSON body, exactly the bytes that were signed. */
  payload: unknown;
}

/**
 * A provider webhook route: Standard Webhooks signature over the raw body with WEBHOOK_SECRET (`webhook-*`
 * or `svix-*` headers, 5-minute tolerance), checked by the `webhook-signature` strategy
 * (src/email/events/webhook-signature.strategy.ts). Unsigned, stale or forged → 401; no secret set → 401.
 * On handlers only (it declares the route's raw body).
 */
export function WebhookSignature() {
  const policy: AuthPolicy = { credential: 'webhook-signature' };
  const header = (name: string, description: string) =>
    ApiHeader({ name, required: true, description: `${description} (or svix-${name.slice(8)})` });
  return applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    // The signature covers the bytes as sent: keep them.
    AcceptsBody({ rawBody: true }),
    header('webhook-id', 'Message id'),
    header('webhook-timestamp', 'Unix seconds when the message was signed'),
    header('webhook-signature', '`v1,<base64 HMAC-SHA256 of id.timestamp.body>`'),
    ApiErrors(HttpStatus.UNAUTHORIZED),
  );
}

/** `@SignedWebhook() message: SignedWebhookMessage` on a `@WebhookSignature()` route. */
export const SignedWebhook = callerDecorator('webhook-signature', 'SignedWebhook');
