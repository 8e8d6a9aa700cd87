import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';

const DAY_MS = 86_400_000;

/**
 * When a finished job leaves the queue. Every write that ends a job (`completed` or `dead`) stores this
 * date in `expiresAt`, which a TTL index with `expireAfterSeconds: 0` removes at that time. Computing the
 * date at write time keeps the index spec fixed, so a new `EMAIL_JOB_RETENTION_DAYS` applies at restart
 * (to jobs finished from then on) without rebuilding the index.
 */
@Injectable()
export class JobRetention {
  private readonly retentionMs: number;

  constructor(config: ConfigService<AppConfig, true>) {
    this.retentionMs = config.get('EMAIL_JOB_RETENTION_DAYS', { infer: true }) * DAY_MS;
  }

  expiresAt(finishedAt: Date): Date {
    return new Date(finishedAt.getTime() + this.retentionMs);
  }
}
