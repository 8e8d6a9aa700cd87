import { createHash, timingSafeEqual } from 'node:crypto';
import { MESSAGE_ID_ARGUMENT } from '../../delivery/provider-message-id';
import type { BounceType, EmailEventType } from '../../tracking/schemas/email-event.schema';
import { asObject, eventTime, providerEvent, type ReadPayload, unknownType } from '../provider-payload';
import {
  parseBody,
  type ProviderFormat,
  type VerifiedWebhook,
  WebhookNotConfigured,
  type WebhookRequest,
  WebhookRefused,
} from './provider-format';

/** Postmark's record types, the event each becomes and the field holding its time. */
const RECORDS: Record<string, { type: EmailEventType; at: string; to: string }> = {
  Bounce: { type: 'bounced', at: 'BouncedAt', to: 'Email' },
  SpamComplaint: { type: 'complained', at: 'BouncedAt', to: 'Email' },
  Delivery: { type: 'delivered', at: 'DeliveredAt', to: 'Recipient' },
  Open: { type: 'opened', at: 'ReceivedAt', to: 'Recipient' },
  Click: { type: 'clicked', at: 'ReceivedAt', to: 'Recipient' },
};

/**
 * Postmark's bounce types that mean the address does not take mail (its bounce-type table): a hard bounce
 * and an address that is not valid. Every other type (transient, soft, DNS error, auto-responder, …) may
 * pass on a later attempt.
 */
const HARD_BOUNCES = new Set(['HardBounce', 'BadEmailAddress']);

/** Both sides hashed first: equal lengths for timingSafeEqual, and the comparison leaks no length. */
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Postmark: the webhook URL carries basic-auth credentials (`https://user:password@host/…`), compared with
 * POSTMARK_WEBHOOK_USER and POSTMARK_WEBHOOK_PASSWORD in constant time. Postmark signs nothing and sends no
 * timestamp: a repeated request is caught by the delivery receipt (a day) and by HTTPS in between.
 */
export class PostmarkFormat implements ProviderFormat {
  readonly name = 'postmark' as const;
  private readonly expected: Buffer | null;

  constructor(user: string | undefined, password: string | undefined) {
    this.expected = user && password ? digest(`${user}:${password}`) : null;
  }

  receive(request: WebhookRequest, receivedAt: Date): Promise<VerifiedWebhook> {
    if (!this.expected) {
      throw new WebhookNotConfigured(
        'Postmark webhooks are not configured (POSTMARK_WEBHOOK_USER, POSTMARK_WEBHOOK_PASSWORD)',
      );
    }
    const match = /^Basic ([A-Za-z0-9+/=]{1,1024})$/.exec(request.headers.authorization ?? '');
    if (!match) throw new WebhookRefused('Missing basic-auth credentials');
    if (!timingSafeEqual(digest(Buffer.from(match[1], 'base64').toString('utf8')), this.expected)) {
      throw new WebhookRefused('Invalid webhook credentials');
    }
    const record = asObject(parseBody(request));
    return Promise.resolve({
      deliveries: [
        {
          id: `postmark:${deliveryKey(record)}`,
          read: record ? readRecord(record, receivedAt) : unknownType(null),
        },
      ],
    });
  }
}

/**
 * RecordType + MessageID + the record's own `ID` (bounces and complaints) or its time and link (deliveries,
 * opens, clicks): the same on Postmark's retries, different for a second open of one message.
 */
function deliveryKey(record: Record<string, unknown> | null): string {
  if (!record) return 'unreadable';
  const at = RECORDS[String(record.RecordType)]?.at;
  const parts = [
    record.RecordType,
    record.MessageID,
    record.ID ?? (at ? record[at] : null),
    record.OriginalLink,
  ];
  return parts
    .filter((part) => typeof part === 'string' || typeof part === 'number')
    .map((part) => String(part).slice(0, 300))
    .join(':');
}

function readRecord(record: Record<string, unknown>, receivedAt: Date): ReadPayload {
  const kind = typeof record.RecordType === 'string' ? RECORDS[record.RecordType] : undefined;
  if (!kind) return unknownType(record.RecordType);
  const bounceType: BounceType = HARD_BOUNCES.has(String(record.Type)) ? 'hard' : 'soft';
  return providerEvent({
    type: kind.type,
    // The metadata the worker adds (X-PM-Metadata-app_message_id): our Message-ID, on every record type.
    messageId: asObject(record.Metadata)?.[MESSAGE_ID_ARGUMENT],
    providerMessageId: typeof record.MessageID === 'string' ? record.MessageID : null,
    occurredAt: eventTime(record[kind.at], receivedAt),
    bounceType,
    to: record[kind.to],
    url: record.OriginalLink,
    userAgent: record.UserAgent,
  });
}
