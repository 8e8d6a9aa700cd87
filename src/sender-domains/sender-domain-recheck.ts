import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../config/env';
import { SenderDomainsService } from './sender-domains.service';

const INTERVAL_NAME = 'sender-domain-recheck';
/** How often the loop looks for domains due; each round checks a few, so DNS is never flooded. */
const TICK_MS = 60_000;
const PER_TICK = 20;

/**
 * Re-checks sender domains' records every SENDER_DOMAIN_RECHECK_MS, in every process that runs the e-mail
 * worker. A domain that lost a required record turns `failed` with one warning and stops signing and
 * being a From domain (SenderDomainsService.verify).
 */
@Injectable()
export class SenderDomainRecheck implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SenderDomains');
  private running = false;

  constructor(
    private readonly domains: SenderDomainsService,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.get('SENDER_DOMAIN_RECHECK_MS', { infer: true });
    if (!this.config.get('EMAIL_WORKER_ENABLED', { infer: true }) || every === 0) return;
    this.scheduler.addInterval(
      INTERVAL_NAME,
      setInterval(() => void this.tick(every), Math.min(TICK_MS, every)),
    );
  }

  beforeApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) this.scheduler.deleteInterval(INTERVAL_NAME);
  }

  private async tick(every: number): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.domains.recheckOldest(new Date(Date.now() - every), PER_TICK);
    } catch (error) {
      this.logger.error(`Sender domain re-check failed: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
