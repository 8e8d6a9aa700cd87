import { Injectable } from '@nestjs/common';
import { InjectKind, type KindRuntime } from '../../queue/kind-runtime';
import { PollingWorker, type RunSummary } from '../../queue/polling-worker';
import { CHAT_KIND, type ChatKindTypes, type DeliveryOutcome } from '../chat-kind';
import { ChatOutboxStore } from '../chat-outbox.store';
import { ChatDeliveryHandler } from './chat-delivery.handler';
import type { ChatScan } from './chat-scan';

export type DeliveryRunSummary = RunSummary<DeliveryOutcome['status']>;

/**
 * Delivers the outbox on the engine's polling worker (src/queue/): every `CHAT_WORKER_INTERVAL_MS` a run
 * scans the due notifications, oldest first, and works through them `concurrency` at a time with
 * `@JobHandler(CHAT_KIND, 'chat.deliver')` (ChatDeliveryHandler); its lookups are shared per scan.
 */
@Injectable()
export class ChatDeliveryWorker extends PollingWorker<ChatKindTypes> {
  constructor(
    @InjectKind(CHAT_KIND) runtime: KindRuntime<ChatKindTypes>,
    store: ChatOutboxStore,
    private readonly handler: ChatDeliveryHandler,
  ) {
    super(runtime, store);
  }

  protected override newScan(): ChatScan {
    return this.handler.newScan();
  }
}
