import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { MESSAGE_ID_ARGUMENT } from '../../delivery/provider-message-id';
import type { EmailEventType } from '../../tracking/schemas/email-event.schema';
import { asObject, eventTime, providerEvent, type ReadPayload, unknownType } from '../provider-payload';
import {
  isRecent,
  parseBody,
  type ProviderDelivery,
  type ProviderFormat,
  SIGNATURE_TOLERANCE_MS,
  singleHeader,
  type VerifiedWebhook,
  WebhookNotConfigured,
  type WebhookRequest,
  WebhookRefused,
} from './provider-format';

const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/** SendGrid's event names and the event each becomes (`bounce` and `dropped` are read by `bounceOf`). */
const TYPES: Record<string, EmailEventType> = {
  processed: 'sent',
  delivered: 'delivered',
  deferred: 'delivery_delayed',
  bounce: 'bounced',
  dropped: 'bounced',
  spamreport: 'complained',
  open: 'opened',
  click: 'clicked',
};

/**
 * SendGrid's Signed Event Webhook: an ECDSA P-256 signature (base64 DER) over the timestamp header followed
 * by the raw body, verified with SENDGRID_WEBHOOK_PUBLIC_KEY; a timestamp more than 5 minutes from now is
 * refused, so a captured request cannot be replayed later. One request carries a JSON array of events.
 */
export class SendGridFormat implements ProviderFormat {
  readonly name = 'sendgrid' as const;
  private readonly key: KeyObject | null;

  constructor(publicKey: string | undefined) {
    this.key = publicKey
      ? createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' })
      : null;
  }

  receive(request: WebhookRequest, receivedAt: Date): Promise<VerifiedWebhook> {
    if (!this.key)
      throw new WebhookNotConfigured('SendGrid webhooks are not configured (SENDGRID_WEBHOOK_PUBLIC_KEY)');
    const signature = singleHeader(request, SIGNATURE_HEADER);
    const timestamp = singleHeader(request, TIMESTAMP_HEADER);
    if (!signature || !timestamp)
      throw new WebhookRefused(`Missing ${SIGNATURE_HEADER} or ${TIMESTAMP_HEADER}`);
    if (!Buffer.isBuffer(request.rawBody)) throw new WebhookRefused('Invalid webhook signature');
    const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), request.rawBody]);
    if (!verify('sha256', signed, this.key, Buffer.from(signature, 'base64'))) {
      throw new WebhookRefused('Invalid webhook signature');
    }
    if (!isRecent(timestamp, receivedAt, SIGNATURE_TOLERANCE_MS)) {
      throw new WebhookRefused('Webhook timestamp too old or too new');
    }
    const body = parseBody(request);
    const events = Array.isArray(body) ? (body as unknown[]) : [body];
    return Promise.resolve({
      deliveries: events.map((event, index) => deliveryOf(event, index, timestamp, receivedAt)),
    });
  }
}

function deliveryOf(value: unknown, index: number, timestamp: string, receivedAt: Date): ProviderDelivery {
  const event = asObject(value);
  const eventId = event?.sg_event_id;
  // Without its own id, an event is keyed by its place in this signed request (a retry repeats both).
  const id = `sendgrid:${typeof eventId === 'string' && eventId !== '' ? eventId.slice(0, 200) : `${timestamp}#${index}`}`;
  return { id, read: event ? readEvent(event, receivedAt) : unknownType(value) };
}

function readEvent(event: Record<string, unknown>, receivedAt: Date): ReadPayload {
  const type = typeof event.event === 'string' ? TYPES[event.event] : undefined;
  if (!type) return unknownType(event.event);
  return providerEvent({
    type,
    // Our Message-ID: the custom argument the worker adds (every event), else `smtp-id`, the Message-ID
    // header SendGrid received over SMTP (open and click events leave it out).
    messageId: event[MESSAGE_ID_ARGUMENT] ?? event['smtp-id'],
    providerMessageId: sendGridMessageId(event.sg_message_id),
    occurredAt: eventTime(event.timestamp, receivedAt),
    bounceType: event.event === 'bounce' && event.type !== 'blocked' ? 'hard' : 'soft',
    to: event.email,
    url: event.url,
    userAgent: event.useragent,
  });
}

/**
 * `sg_message_id` is the X-Message-Id SendGrid answered the send with, followed by `.` and a suffix of its
 * own (`14c5d75ce93.dfd.64b469.filter0001…`): the part before the first `.` names the message.
 */
export function sendGridMessageId(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.split('.')[0] : null;
}
