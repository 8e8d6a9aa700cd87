import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../../config/env';
import { JobHandlers } from '../../queue/job-handlers';
import { WorkerHeartbeat } from '../../queue/worker-heartbeat';
import { PollingWorker, type RunSummary, type WorkerSettings } from '../../queue/polling-worker';
import type { DueJob } from '../../queue/queue-kind';
import { ChatOutboxStore, type DeliveryOutcome } from '../chat-outbox.store';
import type { ChatNotification } from '../schemas/chat-notification.schema';
import { ChatDeliveryHandler, type ChatScan } from './chat-delivery.handler';
import { CHAT_DELIVERY_OPTIONS, type ChatDeliveryOptions } from './delivery-options';

export type DeliveryRunSummary = RunSummary<DeliveryOutcome['status']>;

/**
 * Delivers the outbox on the engine's polling worker (src/queue/): every `CHAT_WORKER_INTERVAL_MS` a run
 * scans the due notifications, oldest first, and works through them `concurrency` at a time with
 * `@JobHandler('chat.deliver')` (ChatDeliveryHandler).
 */
@Injectable()
export class ChatDeliveryWorker extends PollingWorker<ChatNotification, DueJob, DeliveryOutcome, ChatScan> {
  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    store: ChatOutboxStore,
    handlers: JobHandlers,
    scheduler: SchedulerRegistry,
    heartbeat: WorkerHeartbeat,
    private readonly handler: ChatDeliveryHandler,
    @Inject(CHAT_DELIVERY_OPTIONS) private readonly options: ChatDeliveryOptions,
  ) {
    super(ChatDeliveryWorker.name, store, handlers, scheduler, heartbeat);
  }

  protected settings(): WorkerSettings {
    const { concurrency, leaseMs, scanSize } = this.options;
    return {
      enabled: this.config.get('CHAT_WORKER_ENABLED', { infer: true }),
      intervalMs: this.config.get('CHAT_WORKER_INTERVAL_MS', { infer: true }),
      shutdownMs: this.config.get('WORKER_SHUTDOWN_MS', { infer: true }),
      concurrency,
      ratePerSecond: 0,
      leaseMs,
      scanSize,
      rescanAfterMs: 2_000,
      finishBatchSize: concurrency,
      reapEveryMs: this.options.reapEveryMs ?? 30_000,
    };
  }

  protected override newScan(): ChatScan {
    return this.handler.newScan();
  }
}
