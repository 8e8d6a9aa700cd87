import { ChatErasureListener } from './chat-erasure.listener';
import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../apps/apps.module';
import { ChatDigest } from './chat-digest';
import { ChatNotifier } from './chat-notifier';
import { ChatOutboxStore } from './chat-outbox.store';
import { ChatProducers } from './chat-producers';
import { ChatRulesController } from './chat-rules.controller';
import { ChatRulesService } from './chat-rules.service';
import { ChatBacklog } from './delivery/chat-backlog';
import { ChatDeliveryHandler } from './delivery/chat-delivery.handler';
import { ChatDeliveryWorker } from './delivery/chat-delivery.worker';
import { ChatDestinations } from './delivery/chat-destinations';
import { HostResolver } from './delivery/host-resolver';
import { WebhookAddressPolicy } from './delivery/webhook-address-policy';
import { WebhookSender } from './delivery/webhook-sender';
import { QueueModule } from '../queue/queue.module';
import { CHAT_KIND } from './chat-kind';
import { ChatRule, ChatRuleSchema } from './schemas/chat-rule.schema';

/**
 * Chat notifications: routing rules, the outbox, its delivery worker and the daily digest. Domain events of
 * other modules come in through `ChatProducers`; other modules may also call `ChatNotifier.notify`, and read
 * the delivery backlog through `ChatBacklog`.
 */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: ChatRule.name, schema: ChatRuleSchema }]),
    QueueModule.forKind(CHAT_KIND, { ownStore: true, ownWorker: true }),
    AppsModule,
  ],
  controllers: [ChatRulesController],
  providers: [
    ChatRulesService,
    ChatErasureListener,
    ChatNotifier,
    ChatOutboxStore,
    ChatProducers,
    ChatDigest,
    ChatDeliveryWorker,
    ChatDeliveryHandler,
    ChatBacklog,
    ChatDestinations,
    WebhookSender,
    WebhookAddressPolicy,
    HostResolver,
  ],
  exports: [ChatNotifier, ChatBacklog],
})
export class ChatModule {}
