import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { SchedulerRegistry } from '@nestjs/schedule';
import { isValidObjectId, Model } from 'mongoose';
import type { AppConfig } from '../../config/env';
import { EmailEvents, type CampaignJobsFinishedEvent } from '../../email/email.events';
import { EmailService } from '../../email/email.service';
import { KeyedThrottle } from './keyed-throttle';
import { Campaign, type CampaignStats, type CampaignStatus } from './schemas/campaign.schema';

/**
 * While messages are being sent a campaign is recounted at most once a second per process, and at most a
 * fiftieth of the time (a recount that took 100 ms waits 5 s): on the dev database a recount scans the
 * whole queue and holds the collection's lock, so the worker's claims and outcome writes wait for it
 * (100 to 500 ms for 100,000 jobs on this machine); on MongoDB it reads an index. When a worker's run
 * ends (nothing more due), the campaigns it touched are recounted at once: that is when they finish.
 */
const RECOUNT_MIN_INTERVAL_MS = 1_000;
const RECOUNT_COST_RATIO = 50;
/** Every sending campaign is recounted this often, so a lost hint (a crashed worker) is repaired. */
export const SWEEP_EVERY_MS = 30_000;
const SWEEP_NAME = 'campaign-progress-sweep';

/**
 * Keeps a sending campaign's `stats` and status in step with its jobs in the queue, which are the only
 * record of what happened: `stats` are set (never added to) from a count of the jobs by final state, and
 * the campaign becomes `sent` (or `failed` when not one message could be sent) once its plan has finished
 * and every message has a final state. Recounts are triggered by the worker's hints (throttled per
 * campaign) and by a periodic sweep of the sending campaigns; any number of them, in any number of
 * processes, in any order, leave the same result, because a finished campaign's counts no longer change
 * and every write is conditional on `sending`.
 */
@Injectable()
export class CampaignProgress implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CampaignProgress.name);
  private readonly throttle = new KeyedThrottle(
    RECOUNT_MIN_INTERVAL_MS,
    (campaignId) => this.recount(campaignId),
    (campaignId, error) =>
      this.logger.warn(
        `Campaign ${campaignId}: recount failed (the sweep retries): ${(error as Error).message}`,
      ),
    RECOUNT_COST_RATIO,
  );

  constructor(
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly email: EmailService,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  /** The sweep runs where the queue is worked (a worker that crashed left its hints unsent). */
  onApplicationBootstrap(): void {
    if (!this.config.get('EMAIL_WORKER_ENABLED', { infer: true })) return;
    const timer = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.logger.error(`Campaign sweep failed: ${(error as Error).message}`, (error as Error).stack),
      );
    }, SWEEP_EVERY_MS);
    this.scheduler.addInterval(SWEEP_NAME, timer);
  }

  /** Recounts still waiting for their throttle run now, so a clean shutdown leaves campaigns current. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', SWEEP_NAME)) this.scheduler.deleteInterval(SWEEP_NAME);
    await this.flush();
  }

  @OnEvent(EmailEvents.CampaignJobsFinished)
  onJobsFinished(event: CampaignJobsFinishedEvent): void {
    for (const campaignId of event.campaignIds) this.throttle.request(campaignId, event.drained === true);
  }

  /** Runs the recounts that wait for their throttle interval now, and waits for them. */
  flush(): Promise<void> {
    return this.throttle.flush();
  }

  /** Recounts every sending campaign; returns how many it looked at. */
  async sweep(): Promise<number> {
    const sending = await this.campaigns.find({ status: 'sending' }, { _id: 1 }).lean().exec();
    for (const { _id } of sending) await this.recount(String(_id));
    return sending.length;
  }

  async recount(campaignId: string): Promise<void> {
    if (!isValidObjectId(campaignId)) return;
    const { planFinished, total, sent, failed, skipped } = await this.email.campaignJobCounts(campaignId);
    const stats: CampaignStats = { total, sent, failed };
    const finished = planFinished && sent + failed === total;
    const status: CampaignStatus = sent > 0 ? 'sent' : 'failed';
    const written = await this.campaigns
      .findOneAndUpdate(
        { _id: campaignId, status: 'sending' },
        { $set: finished ? { stats, status, completedAt: new Date() } : { stats } },
        { projection: { appId: 1 } },
      )
      .lean()
      .exec();
    // The write is conditional on `sending`: of all the processes recounting, one finishes it and logs.
    if (finished && written) {
      this.logger.log(
        `Campaign ${campaignId} of app ${written.appId} finished (${status}): ${total} message(s), ` +
          `${sent} sent, ${failed - skipped} failed, ${skipped} skipped (suppressed or refused address)`,
      );
      await this.reconcileAnalytics(campaignId);
    }
  }

  /** Its analytics agree with its events once it has finished (a failure is logged with the remedy). */
  private async reconcileAnalytics(campaignId: string): Promise<void> {
    try {
      if (await this.email.reconcileCampaignAnalytics(campaignId)) {
        this.logger.log(`Campaign ${campaignId}: analytics counters rebuilt from its events`);
      }
    } catch (error) {
      this.logger.error(
        `Campaign ${campaignId}: analytics not checked (${(error as Error).message}); ` +
          `npm run analytics:rebuild -- --campaign ${campaignId}`,
      );
    }
  }
}
