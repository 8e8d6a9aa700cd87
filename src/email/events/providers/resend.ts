import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { readProviderPayload } from '../provider-payload';
import {
  parseBody,
  type ProviderFormat,
  singleHeader,
  type VerifiedWebhook,
  WebhookNotConfigured,
  type WebhookRequest,
  WebhookRefused,
} from './provider-format';

/** The three Standard Webhooks headers; Svix (which Resend uses) sends the same values under `svix-*`. */
const HEADERS = ['id', 'timestamp', 'signature'] as const;

const header = (request: WebhookRequest, name: (typeof HEADERS)[number]) =>
  singleHeader(request, `webhook-${name}`) ?? singleHeader(request, `svix-${name}`);

/**
 * Resend (Standard Webhooks, verified by the `standardwebhooks` package): `v1,` base64 HMAC-SHA256 of
 * `id.timestamp.rawBody` with WEBHOOK_SECRET, compared in constant time, and a timestamp within 5 minutes of
 * now. One event per request; its `webhook-id` is the same on every retry.
 */
export class ResendFormat implements ProviderFormat {
  readonly name = 'resend' as const;
  private readonly webhook: Webhook | null;

  constructor(secret: string | undefined) {
    this.webhook = secret ? new Webhook(secret) : null;
  }

  receive(request: WebhookRequest, receivedAt: Date): Promise<VerifiedWebhook> {
    if (!this.webhook)
      throw new WebhookNotConfigured('Provider webhooks are not configured (WEBHOOK_SECRET)');
    const [id, timestamp, signature] = HEADERS.map((name) => header(request, name));
    if (!id || !timestamp || !signature) {
      throw new WebhookRefused('Missing webhook-id, webhook-timestamp or webhook-signature header');
    }
    if (!Buffer.isBuffer(request.rawBody)) throw new WebhookRefused('Invalid webhook signature');
    try {
      this.webhook.verify(
        request.rawBody,
        { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature },
        { jsonParse: false },
      );
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      throw new WebhookRefused(`Invalid webhook signature: ${error.message}`);
    }
    // Signed by the provider: now worth parsing. A body that is not JSON is the sender's mistake (400).
    const payload = parseBody(request);
    return Promise.resolve({ deliveries: [{ id, read: readProviderPayload(payload, receivedAt) }] });
  }
}
