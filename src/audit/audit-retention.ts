import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import type { AppConfig } from '../config/env';
import { AuditLogService } from './audit-log.service';

const CRON_NAME = 'audit-retention';
/** Once a day, at a quiet minute. */
const DAILY = '17 3 * * *';

/**
 * Deletes audit records older than AUDIT_RETENTION_DAYS, daily, in every API process (the delete is a
 * prefix of the chain and idempotent, so instances running it together do no harm). A scheduled delete
 * rather than a TTL index: TTL removes documents one by one in its own order, which could cut a hole in
 * the middle of the chain.
 */
@Injectable()
export class AuditRetention implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AuditRetention.name);

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly scheduler: SchedulerRegistry,
    private readonly audit: AuditLogService,
  ) {}

  onApplicationBootstrap(): void {
    const job = CronJob.from({
      cronTime: DAILY,
      onTick: async () => {
        try {
          const deleted = await this.audit.sweep(this.config.get('AUDIT_RETENTION_DAYS', { infer: true }));
          if (deleted) this.logger.log(`Audit retention: deleted ${deleted} record(s)`);
        } catch (error) {
          this.logger.error(`Audit retention failed: ${(error as Error).message}`, (error as Error).stack);
        }
      },
    });
    this.scheduler.addCronJob(CRON_NAME, job);
    job.start();
  }

  beforeApplicationShutdown(): void {
    if (this.scheduler.doesExist('cron', CRON_NAME)) this.scheduler.deleteCronJob(CRON_NAME);
  }
}
