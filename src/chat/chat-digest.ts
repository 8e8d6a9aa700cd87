import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { AppsService } from '../apps/apps.service';
import type { AppConfig } from '../config/env';
import { SignupEvents } from '../contacts/signup.events';
import { FeedbackEvents } from '../feedback/feedback.events';
import { TicketEvents } from '../tickets/ticket.events';
import { WantEvents } from '../wants/want.events';
import { ChatOutboxStore } from './chat-outbox.store';

export const DIGEST_EVENT = 'digest.daily';
const CRON_NAME = 'chat-digest';
const DAY_MS = 24 * 3_600_000;

/** What the digest counts, by the event of the notifications the outbox received. */
const COUNTED = {
  tickets: TicketEvents.Created,
  wants: WantEvents.Created,
  feedback: FeedbackEvents.Created,
  signups: SignupEvents.NewsletterSignup,
} as const;
type Counts = Record<keyof typeof COUNTED, number>;

/**
 * The daily digest (channel `digest`): at `CHAT_DIGEST_CRON`, for each app with activity in the 24 hours
 * before, the counts of new tickets, wants, feedback and newsletter signups. It counts the notifications
 * the outbox received for those events, so it needs no other module's data. Every process that runs the
 * chat worker schedules it; the digest's key (app and period) makes them store it once.
 */
@Injectable()
export class ChatDigest implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ChatDigest.name);

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly scheduler: SchedulerRegistry,
    private readonly store: ChatOutboxStore,
    private readonly apps: AppsService,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.get('CHAT_WORKER_ENABLED', { infer: true })) return;
    const job = CronJob.from({
      cronTime: this.config.get('CHAT_DIGEST_CRON', { infer: true }),
      onTick: async () => {
        try {
          const stored = await this.run();
          this.logger.log(`Chat digest: ${stored} app(s) had activity`);
        } catch (error) {
          this.logger.error(`Chat digest failed: ${(error as Error).message}`, (error as Error).stack);
        }
      },
    });
    this.scheduler.addCronJob(CRON_NAME, job);
    job.start();
  }

  beforeApplicationShutdown(): void {
    if (this.scheduler.doesExist('cron', CRON_NAME)) this.scheduler.deleteCronJob(CRON_NAME);
  }

  /** Stores the digests of the 24 hours up to `now` (to the minute); returns how many were new. */
  async run(now = new Date()): Promise<number> {
    const periodEnd = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
    const periodStart = new Date(periodEnd.getTime() - DAY_MS);
    const rows = await this.store.countEvents(Object.values(COUNTED), periodStart, periodEnd);
    const byApp = new Map<string, Counts>();
    for (const { appId, event, count } of rows) {
      const counts = byApp.get(appId) ?? { tickets: 0, wants: 0, feedback: 0, signups: 0 };
      const name = (Object.keys(COUNTED) as (keyof Counts)[]).find((key) => COUNTED[key] === event);
      if (name) counts[name] += count;
      byApp.set(appId, counts);
    }
    let stored = 0;
    // Apps that still exist: a deleted app's counts have nobody to go to.
    for (const app of await this.apps.list()) {
      const counts = byApp.get(app.id);
      if (!counts) continue;
      const created = await this.store.insert({
        appId: app.id,
        channel: 'digest',
        event: DIGEST_EVENT,
        summary: 'Daily digest of the last 24 hours',
        data: { ...counts, periodStartAt: periodStart.toISOString(), periodEndAt: periodEnd.toISOString() },
        key: `digest:${app.id}:${periodEnd.toISOString()}`,
      });
      if (created) stored += 1;
    }
    return stored;
  }
}
