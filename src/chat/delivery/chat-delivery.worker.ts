import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import { randomBytes } from 'node:crypto';
import { AppsService } from '../../apps/apps.service';
import type { App } from '../../apps/schemas/app.schema';
import type { AppConfig } from '../../config/env';
import { retryDelayMs } from '../../email/jobs/backoff';
import type { ChatChannel } from '../chat-channels';
import { ChatOutboxStore, type DeliveryOutcome } from '../chat-outbox.store';
import type {
  ChatDestinationKind,
  ChatNotification,
  WebhookFormat,
} from '../schemas/chat-notification.schema';
import { type ChatDestination, ChatDestinations } from './chat-destinations';
import { type ChatMessage, logLine, payloadFor, webhookFormatOf } from './chat-message';
import { CHAT_DELIVERY_OPTIONS, type ChatDeliveryOptions } from './delivery-options';
import { WebhookSender } from './webhook-sender';

export interface DeliveryRunSummary {
  delivered: number;
  failed: number;
  dead: number;
  /** Notifications another worker claimed first. */
  lostRaces: number;
  reaped: number;
}

const INTERVAL_NAME = 'chat-delivery';
const LABEL_LIMIT = 80;
/** A `chatChannels` value that is a URL is not shown: a webhook URL is a secret, not a label. */
const LOOKS_LIKE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Delivers the outbox. Every `CHAT_WORKER_INTERVAL_MS` a run reaps lapsed leases, then scans the due
 * notifications and works through them `concurrency` at a time: each is claimed by its claim key (so of
 * several workers exactly one takes it), its destination chosen now (the app's rule, the default, the
 * log), sent with a timeout, and its outcome recorded under the claim's token. Failures are retried with
 * exponential backoff until `maxAttempts`.
 */
@Injectable()
export class ChatDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ChatDeliveryWorker.name);
  private run: Promise<DeliveryRunSummary> | null = null;
  private stopping = false;

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly store: ChatOutboxStore,
    private readonly destinations: ChatDestinations,
    private readonly sender: WebhookSender,
    private readonly apps: AppsService,
    private readonly scheduler: SchedulerRegistry,
    @Inject(CHAT_DELIVERY_OPTIONS) private readonly options: ChatDeliveryOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.get('CHAT_WORKER_ENABLED', { infer: true })) return;
    const interval = this.config.get('CHAT_WORKER_INTERVAL_MS', { infer: true });
    this.scheduler.addInterval(
      INTERVAL_NAME,
      setInterval(() => this.tick(), interval),
    );
    this.logger.log(`Chat delivery polling every ${interval} ms`);
  }

  /** Shutdown waits for the calls in flight and records them; what is not claimed stays due. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) this.scheduler.deleteInterval(INTERVAL_NAME);
    await this.run?.catch(() => undefined);
  }

  private tick(): void {
    if (this.run || this.stopping) return;
    this.processDue().catch((error: unknown) => {
      this.logger.error(`Chat delivery run failed: ${(error as Error).message}`, (error as Error).stack);
    });
  }

  /** Works until nothing is due; a call during a run joins that run (one run per process at a time). */
  processDue(): Promise<DeliveryRunSummary> {
    this.run ??= this.runOnce().finally(() => {
      this.run = null;
    });
    return this.run;
  }

  private async runOnce(): Promise<DeliveryRunSummary> {
    const summary: DeliveryRunSummary = { delivered: 0, failed: 0, dead: 0, lostRaces: 0, reaped: 0 };
    summary.reaped = await this.store.reapLapsedLeases(this.options.maxAttempts);
    const context = new RunContext(this.destinations, this.apps);
    while (!this.stopping) {
      const due = await this.store.findDue(this.options.scanSize);
      if (due.length === 0) break;
      const claimed = await this.work(due, context, summary);
      // Every one went to other workers: leave the rest to the next tick instead of spinning.
      if (claimed === 0) break;
    }
    return summary;
  }

  private async work(due: string[], context: RunContext, summary: DeliveryRunSummary): Promise<number> {
    let claimed = 0;
    const slot = async () => {
      for (let claimKey = due.shift(); claimKey && !this.stopping; claimKey = due.shift()) {
        const lockToken = randomBytes(12).toString('hex');
        const held = await this.store.claim(claimKey, lockToken, this.options.leaseMs);
        if (!held) {
          summary.lostRaces += 1;
          continue;
        }
        claimed += 1;
        const outcome = await this.deliver(held, context);
        if (await this.store.finish(held, lockToken, outcome)) summary[outcome.status] += 1;
        else
          this.logger.warn(
            `Chat notification ${String(held._id)}: outcome not recorded, its lease was reaped`,
          );
      }
    };
    // Every slot settles before the run ends, even when one fails (a database error): shutdown waits for
    // the run, so no call may still be going when it returns.
    const slots = await Promise.allSettled(
      Array.from({ length: Math.min(this.options.concurrency, due.length) }, slot),
    );
    const failure = slots.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    return claimed;
  }

  private async deliver(notification: ChatNotification, context: RunContext): Promise<DeliveryOutcome> {
    let destination: ChatDestination | undefined;
    let format: WebhookFormat | undefined;
    try {
      destination = await context.destination(notification.appId, notification.channel);
      if (destination.kind === 'log') {
        this.logger.log(`Chat notification (no webhook configured): ${logLine(notification)}`);
        return { status: 'delivered', destination: 'log' };
      }
      const message = messageOf(notification, await context.app(notification.appId));
      format = webhookFormatOf(new URL(destination.url));
      await this.sender.post(destination.url, payloadFor(format, message), this.options.timeoutMs);
      return { status: 'delivered', destination: destination.kind, format };
    } catch (error) {
      return this.failure(notification, error, destination?.kind, format);
    }
  }

  private failure(
    notification: ChatNotification,
    error: unknown,
    destination: ChatDestinationKind | undefined,
    format: WebhookFormat | undefined,
  ): DeliveryOutcome {
    const message = error instanceof Error ? error.message : String(error);
    const permanent = (error as { permanent?: unknown } | null)?.permanent === true;
    if (permanent || notification.attempts >= this.options.maxAttempts) {
      this.logger.warn(
        `Chat notification ${String(notification._id)} is dead after ${notification.attempts} attempt(s): ${message}`,
      );
      return { status: 'dead', destination, format, error: message };
    }
    const retryAt = new Date(Date.now() + retryDelayMs(notification.attempts, this.options.backoff));
    return { status: 'failed', destination, format, error: message, retryAt };
  }
}

/** Apps and destinations looked up once per run, however many notifications share them. */
class RunContext {
  private readonly apps = new Map<string, Promise<App | null>>();
  private readonly destinations = new Map<string, Promise<ChatDestination>>();

  constructor(
    private readonly resolver: ChatDestinations,
    private readonly appsService: AppsService,
  ) {}

  app(appId: string): Promise<App | null> {
    let found = this.apps.get(appId);
    if (!found) this.apps.set(appId, (found = this.appsService.findByAppId(appId)));
    return found;
  }

  destination(appId: string, channel: ChatChannel): Promise<ChatDestination> {
    const key = `${appId}\n${channel}`;
    let found = this.destinations.get(key);
    if (!found) this.destinations.set(key, (found = this.resolver.resolve(appId, channel)));
    return found;
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
