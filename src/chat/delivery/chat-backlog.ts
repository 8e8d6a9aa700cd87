import { Injectable } from '@nestjs/common';
import { ChatOutboxStore } from '../chat-outbox.store';

/** What the outbox still has to deliver, as an operator's probe sees it (`GET /health`). */
@Injectable()
export class ChatBacklog {
  constructor(private readonly store: ChatOutboxStore) {}

  /** Counts stopped by the server after `maxTimeMS`, so a huge outbox cannot hold a probe. */
  count(maxTimeMS: number): Promise<{ pending: number; failed: number }> {
    return this.store.countBacklog(maxTimeMS);
  }
}
