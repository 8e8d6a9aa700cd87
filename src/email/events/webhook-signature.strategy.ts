import { Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { SignedWebhookMessage } from '../../common/auth/webhook-signature.decorator';
import { parseJsonBytes } from '../../common/http/body/body-parsers';
import { bodyPolicyOf } from '../../common/http/body/body-policy';
import { clientIp } from '../../common/http/client-ip';
import { RetryLaterException } from '../../common/http/retry-later.exception';
import type { AppConfig } from '../../config/env';
import { ForgedSignatureBudget } from './forged-signature-budget';

/** What the strategy reads: the request, and its body's bytes as received (kept unparsed by the body parser). */
export type WebhookRequest = FastifyRequest & { rawBody?: Buffer };

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
 *
 * The body is parsed only once its signature checks out (with every JSON route's limits, 400), so a forged
 * body costs one HMAC and no parse. Each failed check counts against the client IP's budget of forged
 * signatures; over it, failures answer 429 with Retry-After. Valid deliveries are never counted.
 */
@Injectable()
export class WebhookSignatureStrategy extends PassportStrategy(Strategy, 'webhook-signature') {
  private readonly webhook: Webhook | null;

  constructor(
    config: ConfigService<AppConfig, true>,
    private readonly budget: ForgedSignatureBudget,
  ) {
    super();
    const secret = config.get('WEBHOOK_SECRET', { infer: true });
    this.webhook = secret ? new Webhook(secret) : null;
  }

  async validate(request: WebhookRequest): Promise<SignedWebhookMessage> {
    if (!this.webhook)
      throw new UnauthorizedException('Provider webhooks are not configured (WEBHOOK_SECRET)');
    const [id, timestamp, signature] = HEADERS.map((name) => header(request, name));
    if (!id || !timestamp || !signature) {
      return this.refuse(request, 'Missing webhook-id, webhook-timestamp or webhook-signature header');
    }
    if (!Buffer.isBuffer(request.rawBody)) return this.refuse(request, 'Invalid webhook signature');
    try {
      this.webhook.verify(
        request.rawBody,
        { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature },
        { jsonParse: false },
      );
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return this.refuse(request, `Invalid webhook signature: ${error.message}`);
    }
    // Signed by the provider: now worth parsing. A body that is not JSON is the sender's mistake (400).
    const payload = parseJsonBytes(request.rawBody, bodyPolicyOf(request));
    return { id, timestamp: new Date(parseInt(timestamp, 10) * 1000), payload };
  }

  /** 401, or 429 once the client has used its budget of failed checks. */
  private async refuse(request: WebhookRequest, reason: string): Promise<never> {
    const retryAfter = await this.budget.charge(clientIp(request));
    if (retryAfter !== null) {
      throw new RetryLaterException(
        'Too many requests with an invalid webhook signature from this address; retry later',
        retryAfter,
      );
    }
    throw new UnauthorizedException(reason);
  }
}
