import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../../config/env';
import { CampaignsService } from './campaigns.service';

const TICK_NAME = 'campaign-scheduler';
/** A started campaign with no plan job after this long was left by a process that stopped mid-start. */
export const STRANDED_AFTER_MS = 60_000;
/** Stranded campaigns repaired per tick (there are none unless processes die mid-start). */
const STRANDED_PER_TICK = 20;

/**
 * Starts scheduled campaigns (docs/api/newsletters.md "Scheduled sends") where the e-mail queue is worked,
 * every EMAIL_WORKER_INTERVAL_MS: a campaign starts at its `sendAt` give or take that interval. The schedule
 * lives in the database, so a restart loses nothing, and each start is one conditional claim, so any number
 * of instances start each campaign once (CampaignsService.startDue). Ticks in one process never overlap.
 */
@Injectable()
export class CampaignScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CampaignScheduler.name);
  private running: Promise<void> | null = null;

  constructor(
    private readonly campaigns: CampaignsService,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.get('EMAIL_WORKER_ENABLED', { infer: true })) return;
    const every = this.config.get('EMAIL_WORKER_INTERVAL_MS', { infer: true });
    const timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.logger.error(`Campaign scheduler failed: ${(error as Error).message}`, (error as Error).stack),
        )
        .finally(() => (this.running = null));
    }, every);
    this.scheduler.addInterval(TICK_NAME, timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', TICK_NAME)) this.scheduler.deleteInterval(TICK_NAME);
    await this.running;
  }

  /** Starts every campaign due now, then repairs stranded starts; returns how many it started. */
  async tick(now = new Date()): Promise<number> {
    let started = 0;
    for (let id = await this.campaigns.startDue(now); id; id = await this.campaigns.startDue(now)) {
      this.logger.log(`Scheduled campaign ${id} started`);
      started++;
    }
    await this.campaigns.relaunchStranded(new Date(now.getTime() - STRANDED_AFTER_MS), STRANDED_PER_TICK);
    return started;
  }
}
