import { Injectable, Logger } from '@nestjs/common';
import { ProviderEventBatch, type WebhookOutcome } from './provider-event-batch';
import type { ProviderDelivery, VerifiedWebhook } from './providers/provider-format';

export type { WebhookOutcome } from './provider-event-batch';

/** One event's outcome; a request of several events (SendGrid) also lists each one's. */
export interface WebhookResult extends WebhookOutcome {
  events?: WebhookOutcome[];
}

/**
 * Ingests the primary provider's signed webhooks (docs/architecture.md "Provider webhook"), whichever format
 * read them (src/email/events/providers/): each event that names a message goes to ProviderEventBatch,
 * which stores the deliveries that arrive together in one set of writes and processes each once (its key:
 * Resend's `webhook-id`, the SNS MessageId, SendGrid's sg_event_id, …).
 */
@Injectable()
export class ProviderWebhookService {
  private readonly logger = new Logger(ProviderWebhookService.name);

  constructor(private readonly batch: ProviderEventBatch) {}

  /**
   * Processes the events of a verified request together. On a failure the check's own record (Mailgun's
   * token) is released too, so the provider's retry of the whole request goes through.
   */
  async ingest(webhook: VerifiedWebhook): Promise<WebhookResult> {
    const receivedAt = new Date();
    let outcomes: WebhookOutcome[];
    try {
      outcomes = await Promise.all(
        webhook.deliveries.map((delivery) => this.ingestOne(delivery, receivedAt)),
      );
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

  private ingestOne({ id, read }: ProviderDelivery, receivedAt: Date): Promise<WebhookOutcome> {
    if ('ignored' in read) {
      this.logger.warn(`Provider webhook ${id.slice(0, 100)} not processed: ${read.ignored}`);
      return Promise.resolve({ processed: false, eventId: null });
    }
    return this.batch.ingest({ webhookId: id, event: read.event, receivedAt });
  }
}
