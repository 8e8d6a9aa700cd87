import { Injectable, Logger } from '@nestjs/common';
import type { SignedWebhookMessage } from '../../common/auth/webhook-signature.decorator';
import { ProviderEventBatch, type WebhookOutcome } from './provider-event-batch';
import { readProviderPayload } from './provider-payload';

export type { WebhookOutcome } from './provider-event-batch';

/**
 * Ingests the primary provider's signed webhooks (docs/architecture.md "Provider webhook"): reads the
 * payload, and hands what names a message to ProviderEventBatch, which stores the deliveries that arrive
 * together in one set of writes (a repeat is recognised by its `webhook-id`; see there).
 */
@Injectable()
export class ProviderWebhookService {
  private readonly logger = new Logger(ProviderWebhookService.name);

  constructor(private readonly batch: ProviderEventBatch) {}

  async ingest(webhook: SignedWebhookMessage): Promise<WebhookOutcome> {
    const receivedAt = new Date();
    const read = readProviderPayload(webhook.payload, receivedAt);
    if ('ignored' in read) return this.ignore(webhook.id, read.ignored);
    return this.batch.ingest({ webhookId: webhook.id, event: read.event, receivedAt });
  }

  private ignore(webhookId: string, why: string): WebhookOutcome {
    this.logger.warn(`Provider webhook ${webhookId.slice(0, 100)} not processed: ${why}`);
    return { processed: false, eventId: null };
  }
}
