import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Model } from 'mongoose';
import { isDuplicateKey } from '../../../common/database/duplicate-key';
import type { EmailEventType } from '../../tracking/schemas/email-event.schema';
import { asObject, eventTime, providerEvent, type ReadPayload, unknownType } from '../provider-payload';
import type { WebhookToken } from '../schemas/webhook-token.schema';
import {
  isRecent,
  parseBody,
  type ProviderFormat,
  SIGNATURE_TOLERANCE_MS,
  type VerifiedWebhook,
  WebhookNotConfigured,
  type WebhookRequest,
  WebhookRefused,
} from './provider-format';

/** Mailgun's tokens are 50 characters; a longer one is no token of Mailgun's. */
const TOKEN_MAX = 200;

const TYPES: Record<string, EmailEventType> = {
  accepted: 'sent',
  delivered: 'delivered',
  failed: 'bounced',
  complained: 'complained',
  opened: 'opened',
  clicked: 'clicked',
};

/**
 * Mailgun: `{signature: {timestamp, token, signature}, "event-data": {…}}`, where `signature` is the hex
 * HMAC-SHA256 of timestamp + token with MAILGUN_WEBHOOK_SIGNING_KEY (compared in constant time). The HMAC
 * does not cover the event data, and lives inside the body: the body is parsed (with the route's limits)
 * before the check, the one format where it must be. A timestamp more than 5 minutes from now is refused,
 * and each token is accepted once: it is claimed in `email_webhook_tokens` (unique `_id`, shared by every
 * instance) and forgotten by a TTL index once its timestamp could no longer pass.
 */
export class MailgunFormat implements ProviderFormat {
  readonly name = 'mailgun' as const;

  constructor(
    private readonly signingKey: string | undefined,
    private readonly tokens: Model<WebhookToken>,
  ) {}

  async receive(request: WebhookRequest, receivedAt: Date): Promise<VerifiedWebhook> {
    if (!this.signingKey) {
      throw new WebhookNotConfigured('Mailgun webhooks are not configured (MAILGUN_WEBHOOK_SIGNING_KEY)');
    }
    const body = asObject(parseBody(request));
    const { timestamp, token, signature } = asObject(body?.signature) ?? {};
    if (
      typeof timestamp !== 'string' ||
      typeof token !== 'string' ||
      token.length > TOKEN_MAX ||
      typeof signature !== 'string'
    ) {
      throw new WebhookRefused('Missing signature.timestamp, signature.token or signature.signature');
    }
    const expected = createHmac('sha256', this.signingKey)
      .update(timestamp + token)
      .digest();
    const given = /^[0-9a-f]{64}$/i.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new WebhookRefused('Invalid webhook signature');
    }
    if (!isRecent(timestamp, receivedAt, SIGNATURE_TOLERANCE_MS)) {
      throw new WebhookRefused('Webhook timestamp too old or too new');
    }
    await this.claim(token, receivedAt);
    const data = asObject(body?.['event-data']);
    const eventId = typeof data?.id === 'string' && data.id !== '' ? data.id.slice(0, 200) : token;
    return {
      deliveries: [
        { id: `mailgun:${eventId}`, read: data ? readEvent(data, receivedAt) : unknownType(null) },
      ],
      release: async () => {
        await this.tokens.deleteOne({ _id: token }).exec();
      },
    };
  }

  private async claim(token: string, receivedAt: Date): Promise<void> {
    try {
      await this.tokens.create({ _id: token, receivedAt });
    } catch (error) {
      if (isDuplicateKey(error)) throw new WebhookRefused('Webhook token already used');
      throw error;
    }
  }
}

function readEvent(data: Record<string, unknown>, receivedAt: Date): ReadPayload {
  const type = typeof data.event === 'string' ? TYPES[data.event] : undefined;
  if (!type) return unknownType(data.event);
  const headers = asObject(asObject(data.message)?.headers);
  // Mailgun keeps the Message-ID header it was given over SMTP and names it without angle brackets.
  const messageId = typeof headers?.['message-id'] === 'string' ? headers['message-id'] : null;
  return providerEvent({
    type,
    messageId,
    providerMessageId: messageId,
    occurredAt: eventTime(data.timestamp, receivedAt),
    bounceType: data.severity === 'permanent' ? 'hard' : 'soft',
    to: data.recipient,
    url: data.url,
    userAgent: asObject(data['client-info'])?.['user-agent'],
  });
}
