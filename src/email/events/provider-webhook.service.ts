import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { InjectModel } from '@nestjs/mongoose';
import { Model, Types } from 'mongoose';
import type { SignedWebhookMessage } from '../../common/auth/webhook-signature.decorator';
import { isDuplicateKey } from '../../common/database/duplicate-key';
import { SentMessageLookup, type SentMessageRecord } from '../jobs/sent-message-lookup';
import { ComplaintGuard } from './complaint-guard';
import { EmailEventLedger } from './email-event-ledger';
import { ProviderEffects } from './provider-effects';
import { PRIMARY_PROVIDER, type ProviderEvent } from './provider-payload';
import type { ProviderDelivery } from './providers/provider-format';
import { WebhookReceipt } from './schemas/analytics.schemas';

export interface WebhookOutcome {
  processed: boolean;
  eventId: string | null;
}

/** One event's outcome; a request of several events (SendGrid) also lists each one's. */
export interface WebhookResult extends WebhookOutcome {
  events?: WebhookOutcome[];
}

/** The stored event's id follows from the delivery's key: a retried delivery writes the same event. */
function eventIdOf(webhookId: string): Types.ObjectId {
  return new Types.ObjectId(createHash('sha256').update(webhookId).digest().subarray(0, 12));
}

/**
 * Ingests the primary provider's signed webhooks (docs/architecture.md "Provider webhook"), whichever format
 * read them (src/email/events/providers/). A delivery is processed once: its key (Resend's `webhook-id`, the
 * SNS MessageId, SendGrid's sg_event_id, …) is claimed with a receipt keyed by it (unique `_id`) before anything
 * is written; a repeat answers `processed:false` with the event stored the first time. When storing the event
 * or applying a bounce's or complaint's effects fails, the receipt is taken back and the request fails, so
 * the provider's retry processes the delivery again: the suppression must not be lost behind a 200. Both
 * steps are safe to repeat (the event keeps its id and is counted once; each effect is idempotent). Only the
 * complaint guard's check is logged on failure: the next delivery or complaint of the campaign repeats it.
 */
@Injectable()
export class ProviderWebhookService {
  private readonly logger = new Logger(ProviderWebhookService.name);

  constructor(
    @InjectModel(WebhookReceipt.name) private readonly receipts: Model<WebhookReceipt>,
    private readonly messages: SentMessageLookup,
    private readonly ledger: EmailEventLedger,
    private readonly effects: ProviderEffects,
    private readonly guard: ComplaintGuard,
  ) {}

  /**
   * Processes each event of a verified request in turn. On a failure the check's own record (Mailgun's
   * token) is released too, so the provider's retry of the whole request goes through.
   */
  async ingest(webhook: SignedWebhookMessage): Promise<WebhookResult> {
    const outcomes: WebhookOutcome[] = [];
    try {
      for (const delivery of webhook.deliveries) outcomes.push(await this.ingestOne(delivery));
    } catch (error) {
      await webhook.release?.();
      throw error;
    }
    if (outcomes.length === 0) {
      this.logger.log('Provider webhook: nothing to process (an SNS subscription confirmation)');
      return { processed: false, eventId: null };
    }
    const first = outcomes.find((outcome) => outcome.processed) ?? outcomes[0];
    return outcomes.length === 1 ? first : { ...first, events: outcomes };
  }

  private async ingestOne({ id, read }: ProviderDelivery): Promise<WebhookOutcome> {
    const receivedAt = new Date();
    if ('ignored' in read) return this.ignore(id, read.ignored);
    const { event } = read;
    const message = await this.messageOf(event);
    if (!message) {
      const named = event.messageId ?? event.providerMessageId ?? '';
      return this.ignore(id, `unknown message ${named.slice(0, 100)}`);
    }

    const eventId = eventIdOf(id);
    try {
      await this.receipts.create({ _id: id, eventId: String(eventId), receivedAt });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const first = await this.receipts.findById(id).lean<WebhookReceipt>().exec();
      return { processed: false, eventId: first?.eventId ?? null };
    }
    try {
      await this.ledger.append([
        {
          _id: eventId,
          appId: message.appId,
          contactId: message.contactId,
          messageId: message.messageId,
          campaignId: message.campaignId,
          provider: PRIMARY_PROVIDER,
          type: event.type,
          ...(event.bounceType ? { bounceType: event.bounceType } : {}),
          ...(event.url ? { url: event.url } : {}),
          userAgent: event.userAgent,
          automated: event.automated,
          webhookId: id,
          createdAt: event.occurredAt,
        },
      ]);
      if (event.type === 'bounced' || event.type === 'complained') {
        await this.effects.apply({
          type: event.type,
          bounceType: event.bounceType,
          message,
          messageId: message.messageId,
          to: message.to ?? event.to,
          occurredAt: event.occurredAt,
        });
      }
    } catch (error) {
      await this.receipts.deleteOne({ _id: id }).exec();
      throw error;
    }
    // Providers report on a message for as long as it is alive to them: each report extends its ledger entry.
    await this.logFailure('message ledger', () => this.messages.recordEvent(message, receivedAt));

    const campaignId = message.campaignId;
    if (campaignId && (event.type === 'delivered' || event.type === 'complained')) {
      await this.logFailure('complaint guard', () => this.guard.check(campaignId));
    }
    return { processed: true, eventId: String(eventId) };
  }

  /** By our Message-ID where the provider passed it back, else by the provider's own id of the message. */
  private async messageOf(event: ProviderEvent): Promise<SentMessageRecord | null> {
    const byOurs = event.messageId ? await this.messages.find(event.messageId) : null;
    if (byOurs || !event.providerMessageId) return byOurs;
    return this.messages.findByProviderId(event.providerMessageId);
  }

  private ignore(webhookId: string, why: string): WebhookOutcome {
    this.logger.warn(`Provider webhook ${webhookId.slice(0, 100)} not processed: ${why}`);
    return { processed: false, eventId: null };
  }

  private async logFailure(what: string, step: () => Promise<unknown>): Promise<void> {
    try {
      await step();
    } catch (error) {
      this.logger.error(
        `Provider webhook: ${what} failed: ${(error as Error).message}`,
        (error as Error).stack,
      );
    }
  }
}
