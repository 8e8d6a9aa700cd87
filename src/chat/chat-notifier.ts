import { Injectable, Logger } from '@nestjs/common';
import type { ChatNotice } from './chat-notice';
import { ChatOutboxStore } from './chat-outbox.store';

/**
 * The chat module's public surface. `notify` stores a notification in the outbox for the delivery worker
 * and returns at once: a caller (a request) never waits for the store or the webhook and never fails
 * because of them; a store that fails is logged. Other modules call it, or emit a domain event that
 * `ChatProducers` turns into a notification.
 */
@Injectable()
export class ChatNotifier {
  private readonly logger = new Logger(ChatNotifier.name);

  constructor(private readonly store: ChatOutboxStore) {}

  notify(notice: ChatNotice): void {
    this.store.insert(notice).catch((error: unknown) => {
      this.logger.error(
        `Chat notification ${notice.event} of app ${notice.appId} was not stored: ${(error as Error).message}`,
        (error as Error).stack,
      );
    });
  }

  /**
   * For a GDPR erasure: stored notifications no longer carry `email` (replaced by `placeholder`) nor the
   * person's name; pending ones are delivered without them. Returns how many notifications changed.
   */
  scrubAddress(email: string, placeholder: string): Promise<number> {
    return this.store.scrubAddress(email, placeholder);
  }
}
