import { BadRequestException, Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { SignedWebhookMessage } from '../../common/auth/webhook-signature.decorator';
import type { AppConfig } from '../../config/env';

/** What the strategy reads: the headers, and the body exactly as received (Nest's `rawBody`). */
export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  rawBody?: Buffer;
}

/** The three Standard Webhooks headers; Svix (which Resend uses) sends the same values under `svix-*`. */
const HEADERS = ['id', 'timestamp', 'signature'] as const;

function header(request: WebhookRequest, name: (typeof HEADERS)[number]): string | undefined {
  const value = request.headers[`webhook-${name}`] ?? request.headers[`svix-${name}`];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The primary e-mail provider's signature (Standard Webhooks, verified by the `standardwebhooks` package):
 * `v1,` base64 HMAC-SHA256 of `id.timestamp.rawBody` with WEBHOOK_SECRET, compared in constant time, and a
 * timestamp within 5 minutes of now. Missing headers, a stale timestamp or a wrong signature → 401; without
 * WEBHOOK_SECRET every request is refused (401): an unsigned webhook is never trusted.
 */
@Injectable()
export class WebhookSignatureStrategy extends PassportStrategy(Strategy, 'webhook-signature') {
  private readonly webhook: Webhook | null;

  constructor(config: ConfigService<AppConfig, true>) {
    super();
    const secret = config.get('WEBHOOK_SECRET', { infer: true });
    this.webhook = secret ? new Webhook(secret) : null;
  }

  validate(request: WebhookRequest): SignedWebhookMessage {
    if (!this.webhook)
      throw new UnauthorizedException('Provider webhooks are not configured (WEBHOOK_SECRET)');
    const [id, timestamp, signature] = HEADERS.map((name) => header(request, name));
    if (!id || !timestamp || !signature) {
      throw new UnauthorizedException('Missing webhook-id, webhook-timestamp or webhook-signature header');
    }
    if (!Buffer.isBuffer(request.rawBody)) throw new UnauthorizedException('Invalid webhook signature');

    let payload: unknown;
    try {
      payload = this.webhook.verify(request.rawBody, {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        throw new UnauthorizedException(`Invalid webhook signature: ${error.message}`);
      }
      // The signature matched but the body is not JSON: the sender's mistake, not a forgery.
      throw new BadRequestException('The webhook body must be JSON');
    }
    return { id, timestamp: new Date(parseInt(timestamp, 10) * 1000), payload };
  }
}
