import { looksAutomated, USER_AGENT_MAX } from '../tracking/automated';
import type { BounceType, EmailEventType } from '../tracking/schemas/email-event.schema';

/** The `provider` of the primary provider's events. */
export const PRIMARY_PROVIDER = 'primary';

/** The primary provider's event types (Resend's names) and the event each becomes. */
const PROVIDER_TYPES: Record<string, EmailEventType> = {
  'email.sent': 'sent',
  'email.delivered': 'delivered',
  'email.delivery_delayed': 'delivery_delayed',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
};

/** A provider's clock may run ahead a little; an event time further in the future is taken as now. */
const FUTURE_SLACK_MS = 5 * 60_000;
const URL_MAX = 2_048;
const MESSAGE_ID_MAX = 300;

/** What one webhook says, in the service's terms. */
export interface ProviderEvent {
  type: EmailEventType;
  /**
   * The Message-ID the worker gave the message (`<job id>@<sender domain>`, angle brackets optional), when
   * the provider passes it back; else null and `providerMessageId` names the message.
   */
  messageId: string | null;
  /** The provider's own id of the message (SES `mail.messageId`, Postmark `MessageID`, …), if any. */
  providerMessageId?: string | null;
  occurredAt: Date;
  bounceType?: BounceType;
  /** The recipient the provider names, used only when the message's job no longer names the address. */
  to: string | null;
  url?: string;
  userAgent: string | null;
  automated: boolean;
}

export type ReadPayload = { event: ProviderEvent } | { ignored: string };

/**
 * Reads a Resend-shaped payload: `{type, created_at, data: {email_id, to, bounce?: {type}, click?: {link,
 * userAgent}}}`. Anything the service does not handle is `ignored` with the reason (logged, answered
 * `processed:false`).
 */
export function readProviderPayload(payload: unknown, receivedAt: Date): ReadPayload {
  const body = asObject(payload);
  const rawType = body?.type;
  const type = typeof rawType === 'string' ? PROVIDER_TYPES[rawType] : undefined;
  if (!body || !type) return unknownType(rawType);
  const data = asObject(body.data);
  const messageId = data?.email_id;
  if (!data || typeof messageId !== 'string' || messageId.length === 0 || messageId.length > MESSAGE_ID_MAX) {
    return { ignored: 'no data.email_id' };
  }
  return providerEvent({
    type,
    messageId,
    occurredAt: eventTime(body.created_at, receivedAt),
    bounceType: bounceTypeOf(data.bounce),
    to: Array.isArray(data.to) ? (data.to as unknown[])[0] : data.to,
    url: asObject(data.click)?.link,
    userAgent: asObject(data.click)?.userAgent,
  });
}

/** A provider's fields, checked and bounded, as the service's event. */
export function providerEvent(fields: {
  type: EmailEventType;
  /** Ours and the provider's, as the payload has them: kept when a string of a sensible length. */
  messageId: unknown;
  providerMessageId?: unknown;
  occurredAt: Date;
  /** Kept for a `bounced` event only. */
  bounceType?: BounceType;
  to: unknown;
  url?: unknown;
  userAgent?: unknown;
}): ReadPayload {
  const { type } = fields;
  const messageId = boundedId(fields.messageId);
  const providerMessageId = boundedId(fields.providerMessageId);
  if (!messageId && !providerMessageId) return { ignored: 'no message id' };
  const agent = typeof fields.userAgent === 'string' ? fields.userAgent.slice(0, USER_AGENT_MAX) : null;
  const link = fields.url;
  return {
    event: {
      type,
      messageId,
      providerMessageId,
      occurredAt: fields.occurredAt,
      ...(type === 'bounced' ? { bounceType: fields.bounceType ?? 'hard' } : {}),
      to: typeof fields.to === 'string' ? fields.to.trim().toLowerCase() : null,
      ...(type === 'clicked' && typeof link === 'string' && /^https?:\/\//i.test(link)
        ? { url: link.slice(0, URL_MAX) }
        : {}),
      userAgent: agent,
      // The provider's own open and click tracking: automated when it names a machine's user agent.
      automated: (type === 'opened' || type === 'clicked') && agent !== null && looksAutomated(agent),
    },
  };
}

function boundedId(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= MESSAGE_ID_MAX ? value : null;
}

/** A line for the log: a provider's event type as received, bounded. */
export const unknownType = (type: unknown): { ignored: string } => ({
  ignored: `unknown event type ${JSON.stringify(type ?? null).slice(0, 80)}`,
});

/**
 * Resend's `email.bounced` is a permanent rejection unless `data.bounce.type` says otherwise (`Transient`,
 * `Undetermined`): only a permanent one suppresses the address.
 */
function bounceTypeOf(bounce: unknown): BounceType {
  const type = asObject(bounce)?.type;
  return typeof type === 'string' && type.toLowerCase() !== 'permanent' ? 'soft' : 'hard';
}

/** An ISO time or Unix seconds; missing, unreadable or too far ahead: the time it was received. */
export function eventTime(value: unknown, receivedAt: Date): Date {
  const at =
    typeof value === 'string' ? new Date(value) : typeof value === 'number' ? new Date(value * 1000) : null;
  if (!at || Number.isNaN(at.getTime()) || at.getTime() > receivedAt.getTime() + FUTURE_SLACK_MS) {
    return receivedAt;
  }
  return at;
}

export function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
