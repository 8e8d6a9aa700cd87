import { HttpStatus, Logger, ServiceUnavailableException } from '@nestjs/common';
import { verify } from 'node:crypto';
import secureJson from 'secure-json-parse';
import { clientIp } from '../../../common/http/client-ip';
import { RetryLaterException } from '../../../common/http/retry-later.exception';
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
import {
  getSnsUrl,
  SNS_CERTIFICATE_FETCHES,
  type SnsCertificates,
  SnsCertificateUnavailable,
  type SnsEndpointRule,
  snsUrl,
} from './sns-endpoints';

/** The answer while no certificate can be had: SNS retries a 503 (and the Retry-After says when). */
const CERTIFICATE_UNAVAILABLE = 'The SNS signing certificate could not be fetched; retry later';

/** The fields SNS signs, in its order, per message type (a field the message lacks is left out). */
const SIGNED_FIELDS: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: [
    'Message',
    'MessageId',
    'SubscribeURL',
    'Timestamp',
    'Token',
    'TopicArn',
    'Type',
  ],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
const DIGESTS: Record<string, string> = { '1': 'sha1', '2': 'sha256' };

/**
 * A signed message older than the delivery receipts are kept (a day) is refused: within the day a replay
 * finds its receipt, after it the replay is too old.
 */
const MAX_MESSAGE_AGE_MS = 24 * 3_600_000;

/**
 * SES's event names, under `eventType` (event publishing) or `notificationType` (the older notifications).
 */
const TYPES: Record<string, EmailEventType> = {
  Send: 'sent',
  Delivery: 'delivered',
  DeliveryDelay: 'delivery_delayed',
  Bounce: 'bounced',
  Complaint: 'complained',
  Open: 'opened',
  Click: 'clicked',
};

/**
 * Amazon SES through Amazon SNS: the body is SNS's JSON envelope (sent as `text/plain`), signed with RSA
 * (SignatureVersion 1: SHA1, 2: SHA256) by a certificate fetched only from
 * `https://sns.<region>.amazonaws.com` (kept, a bounded number, failures too, with a budget of fetches: see
 * SnsCertificates). The topic must be one of SES_SNS_TOPIC_ARNS: checked before any certificate is fetched,
 * so a stranger's topic costs no fetch. A `SubscriptionConfirmation` is confirmed by GETting its SubscribeURL
 * (same host rule); a `Notification`'s Message is the SES event.
 */
export class SesFormat implements ProviderFormat {
  readonly name = 'ses' as const;
  private readonly logger = new Logger('SesWebhooks');
  private readonly topics: Set<string>;

  constructor(
    topicArns: string | undefined,
    private readonly rule: SnsEndpointRule,
    private readonly certificates: SnsCertificates,
  ) {
    this.topics = new Set(
      (topicArns ?? '')
        .split(',')
        .map((arn) => arn.trim())
        .filter(Boolean),
    );
  }

  async receive(request: WebhookRequest, receivedAt: Date): Promise<VerifiedWebhook> {
    if (this.topics.size === 0)
      throw new WebhookNotConfigured('SES webhooks are not configured (SES_SNS_TOPIC_ARNS)');
    // SNS signs fields of its JSON envelope, not the bytes: the envelope is parsed (with the route's limits)
    // first.
    const message = asObject(parseBody(request));
    await this.verify(message, clientIp(request));
    const envelope = message as Record<string, string>;
    if (!(Date.parse(envelope.Timestamp) >= receivedAt.getTime() - MAX_MESSAGE_AGE_MS)) {
      throw new WebhookRefused('SNS message too old');
    }
    if (envelope.Type === 'SubscriptionConfirmation') {
      await this.confirm(envelope);
      return { deliveries: [] };
    }
    const id = `ses:${envelope.MessageId}`;
    if (envelope.Type !== 'Notification') return { deliveries: [{ id, read: unknownType(envelope.Type) }] };
    let event: unknown;
    try {
      event = secureJson.parse(envelope.Message, undefined, {
        protoAction: 'remove',
        constructorAction: 'remove',
      });
    } catch {
      return { deliveries: [{ id, read: { ignored: 'the SNS Message is not JSON' } }] };
    }
    const ses = asObject(event);
    return { deliveries: [{ id, read: ses ? readSesEvent(ses, receivedAt) : unknownType(null) }] };
  }

  private async verify(message: Record<string, unknown> | null, client: string): Promise<void> {
    const fields = SIGNED_FIELDS[String(message?.Type)];
    if (!message || !fields) throw new WebhookRefused('Not an SNS message');
    if (typeof message.TopicArn !== 'string' || !this.topics.has(message.TopicArn)) {
      throw new WebhookRefused('SNS topic not in SES_SNS_TOPIC_ARNS');
    }
    const digest = DIGESTS[String(message.SignatureVersion)];
    const certificateUrl = snsUrl(message.SigningCertURL, this.rule);
    if (!digest || !certificateUrl?.pathname.endsWith('.pem') || typeof message.Signature !== 'string') {
      throw new WebhookRefused('Invalid SNS signature, version or certificate URL');
    }
    if (!fields.every((name) => name === 'Subject' || typeof message[name] === 'string')) {
      throw new WebhookRefused('SNS message lacks a signed field');
    }
    const text = fields
      .filter((name) => typeof message[name] === 'string')
      .map((name) => `${name}\n${message[name] as string}\n`)
      .join('');
    let key;
    try {
      key = await this.certificates.publicKey(certificateUrl, client);
    } catch (error) {
      if (error instanceof SnsCertificateUnavailable) {
        throw new RetryLaterException(
          CERTIFICATE_UNAVAILABLE,
          error.retryAfterSeconds,
          HttpStatus.SERVICE_UNAVAILABLE,
        );
      }
      // Logged once per failed fetch: the failure is then remembered, and answered without a line.
      this.logger.warn(
        `SNS signing certificate ${certificateUrl.href} unavailable: ${(error as Error).message}`,
      );
      throw new RetryLaterException(
        CERTIFICATE_UNAVAILABLE,
        (this.rule.fetches ?? SNS_CERTIFICATE_FETCHES).failureMemoryMs / 1000,
        HttpStatus.SERVICE_UNAVAILABLE,
      );
    }
    if (!verify(digest, Buffer.from(text, 'utf8'), key, Buffer.from(message.Signature, 'base64'))) {
      throw new WebhookRefused('Invalid SNS signature');
    }
  }

  /** Subscribes the endpoint: SNS sends nothing else until its SubscribeURL has been visited. */
  private async confirm(message: Record<string, string>): Promise<void> {
    const url = snsUrl(message.SubscribeURL, this.rule);
    if (!url) throw new WebhookRefused('SubscribeURL is not an SNS endpoint');
    try {
      await getSnsUrl(url, this.rule);
    } catch (error) {
      this.logger.warn(`SNS subscription to ${message.TopicArn} not confirmed: ${(error as Error).message}`);
      throw new ServiceUnavailableException('The SNS subscription could not be confirmed; retry later');
    }
    this.logger.log(`SNS subscription to ${message.TopicArn} confirmed`);
  }
}

function readSesEvent(event: Record<string, unknown>, receivedAt: Date): ReadPayload {
  const name = event.eventType ?? event.notificationType;
  const type = typeof name === 'string' ? TYPES[name] : undefined;
  if (!type) return unknownType(name);
  const mail = asObject(event.mail);
  // The object named after the event: `bounce`, `complaint`, `delivery`, `open`, `click`, `deliveryDelay`,
  // `send`.
  const detail = asObject(event[String(name).charAt(0).toLowerCase() + String(name).slice(1)]);
  const bounce = asObject(event.bounce);
  const bounceType: BounceType = bounce?.bounceType === 'Permanent' ? 'hard' : 'soft';
  return providerEvent({
    type,
    // Our own Message-ID as SES received it (SES puts its own on the message it sends out).
    messageId: asObject(mail?.commonHeaders)?.messageId ?? null,
    providerMessageId: mail?.messageId ?? null,
    occurredAt: eventTime(detail?.timestamp ?? mail?.timestamp, receivedAt),
    bounceType,
    to: recipientOf(event, mail),
    url: asObject(event.click)?.link,
    userAgent: asObject(event.open)?.userAgent ?? asObject(event.click)?.userAgent,
  });
}

function recipientOf(event: Record<string, unknown>, mail: Record<string, unknown> | null): unknown {
  const lists = [
    [asObject(event.bounce)?.bouncedRecipients, 'emailAddress'],
    [asObject(event.complaint)?.complainedRecipients, 'emailAddress'],
    [asObject(event.delivery)?.recipients, null],
    [mail?.destination, null],
  ] as const;
  for (const [list, field] of lists) {
    const first: unknown = Array.isArray(list) ? (list as unknown[])[0] : undefined;
    const value = field ? asObject(first)?.[field] : first;
    if (typeof value === 'string') return value;
  }
  return null;
}
