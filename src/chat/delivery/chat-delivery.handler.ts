import { Injectable, Logger } from '@nestjs/common';
import { Inject } from '@nestjs/common';
import { AppsService } from '../../apps/apps.service';
import type { App } from '../../apps/schemas/app.schema';
import { JobHandler } from '../../queue/job-handler.decorator';
import type { JobContext } from '../../queue/polling-worker';
import { CHAT_DELIVER, CHAT_KIND, type DeliveryOutcome } from '../chat-kind';
import type { ChatNotification, WebhookFormat } from '../schemas/chat-notification.schema';
import { type ChatDestination, ChatDestinations } from './chat-destinations';
import { ChatScan } from './chat-scan';
import { type ChatMessage, logLine, payloadFor, webhookFormatOf } from './chat-message';
import { CHAT_DELIVERY_OPTIONS, type ChatDeliveryOptions } from './delivery-options';
import { WebhookSender } from './webhook-sender';

const LABEL_LIMIT = 80;
/** A `chatChannels` value that is a URL is not shown: a webhook URL is a secret, not a label. */
const LOOKS_LIKE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Delivers one notification (`@JobHandler(CHAT_KIND, 'chat.deliver')`): its destination chosen now (the
 * app's rule, the default, the log), sent with a timeout. A failure is retried with exponential backoff
 * until `maxAttempts`; a refusal no retry can change (a PermanentJobError) is dead at once.
 */
@Injectable()
export class ChatDeliveryHandler {
  private readonly logger = new Logger(ChatDeliveryHandler.name);

  constructor(
    private readonly destinations: ChatDestinations,
    private readonly sender: WebhookSender,
    private readonly apps: AppsService,
    @Inject(CHAT_DELIVERY_OPTIONS) private readonly options: ChatDeliveryOptions,
  ) {}

  /** Lookups shared by the notifications of one scan. */
  newScan(): ChatScan {
    return new ChatScan(this.destinations, this.apps);
  }

  @JobHandler(CHAT_KIND, CHAT_DELIVER)
  async deliver(notification: ChatNotification, context: JobContext<ChatScan>): Promise<DeliveryOutcome> {
    const scan = context.scan;
    let destination: ChatDestination | undefined;
    let format: WebhookFormat | undefined;
    try {
      destination = await scan.destination(notification.appId, notification.channel);
      if (destination.kind === 'log') {
        this.logger.log(`Chat notification (no webhook configured): ${logLine(notification)}`);
        return { status: 'delivered', destination: 'log' };
      }
      const message = messageOf(notification, await scan.app(notification.appId));
      format = webhookFormatOf(new URL(destination.url));
      await this.sender.post(destination.url, payloadFor(format, message), this.options.timeoutMs);
      return { status: 'delivered', destination: destination.kind, format };
    } catch (error) {
      // The engine's retry rule, with where the attempt went.
      return { ...context.fail(error), destination: destination?.kind, format };
    }
  }
}

/** The notification as shown: the app's name (its id once the app is gone) and its label for the channel. */
function messageOf(notification: ChatNotification, app: App | null): ChatMessage {
  // A lean read gives the `chatChannels` Map as a plain object.
  const labels = (app?.chatChannels ?? {}) as Record<string, string> | Map<string, string>;
  const label = (
    labels instanceof Map ? labels.get(notification.channel) : labels[notification.channel]
  )?.trim();
  return {
    appId: notification.appId,
    appName: app?.name ?? notification.appId,
    channel: notification.channel,
    channelLabel: label && !LOOKS_LIKE_URL.test(label) ? label.slice(0, LABEL_LIMIT) : notification.channel,
    event: notification.event,
    summary: notification.summary,
    data: notification.data ?? {},
  };
}
