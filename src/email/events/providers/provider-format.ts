import type { FastifyRequest } from 'fastify';
import type { EmailProviderName } from '../email-events.config';
import { parseJsonBytes } from '../../../common/http/body/body-parsers';
import { bodyPolicyOf } from '../../../common/http/body/body-policy';
import type { ReadPayload } from '../provider-payload';

/** What a provider format reads: the request, and its body's bytes as received (kept unparsed). */
export type WebhookRequest = FastifyRequest & { rawBody?: Buffer };

/** How far a signed timestamp may be from now (as Standard Webhooks allows): an older request is a replay. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** One event of a verified request, with the key that makes a repeated delivery of it recognisable. */
export interface ProviderDelivery {
  /** Unique per event and the same on every retry of it (SNS MessageId, sg_event_id, …). */
  id: string;
  read: ReadPayload;
}

/**
 * One provider's webhook: checks that the request comes from the provider (on the raw bytes, before the
 * body is trusted or parsed), then reads its events in the shape the shared processing takes.
 */
export interface ProviderFormat {
  readonly name: EmailProviderName;
  /** The events of an authentic request; throws WebhookRefused when the check fails. */
  receive(request: WebhookRequest, receivedAt: Date): Promise<VerifiedWebhook>;
}

/** A request that failed its provider's check: 401, counted against the client's forged-signature budget. */
export class WebhookRefused extends Error {}

/** The chosen provider's secret is not set: every request is refused (401), and nobody is charged for it. */
export class WebhookNotConfigured extends Error {}

/** What a verified request carries to the shared processing. */
export interface VerifiedWebhook {
  deliveries: ProviderDelivery[];
  /**
   * Undoes what the check itself recorded (Mailgun's token), so that the provider's retry of a request
   * whose processing failed is not refused as a replay.
   */
  release?: () => Promise<void>;
}

/** The body of a request whose check passed (or whose signature lies inside it), with the route's limits. */
export function parseBody(request: WebhookRequest): unknown {
  if (!Buffer.isBuffer(request.rawBody)) throw new WebhookRefused('No request body');
  return parseJsonBytes(request.rawBody, bodyPolicyOf(request));
}

/** A signed timestamp (Unix seconds) within `toleranceMs` of now, either way. */
export function isRecent(seconds: unknown, now: Date, toleranceMs: number): boolean {
  const value = typeof seconds === 'string' && /^\d{1,12}$/.test(seconds) ? Number(seconds) : NaN;
  return Number.isFinite(value) && Math.abs(now.getTime() - value * 1000) <= toleranceMs;
}

/** The header's value when it was sent once and is not empty. */
export function singleHeader(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
