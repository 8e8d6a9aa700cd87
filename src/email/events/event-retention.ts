import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';

const DAY_MS = 86_400_000;

/**
 * When an e-mail event leaves `email_events` (EMAIL_EVENTS_RETENTION_DAYS after it happened): written in
 * its `expiresAt`, which a TTL index removes at that time. Analytics are unaffected: they read counters.
 */
@Injectable()
export class EventRetention {
  readonly retentionMs: number;

  constructor(config: ConfigService<AppConfig, true>) {
    this.retentionMs = config.get('EMAIL_EVENTS_RETENTION_DAYS', { infer: true }) * DAY_MS;
  }

  /** Outside Nest (benches, unit tests): a retention of `days`. */
  static ofDays(days: number): EventRetention {
    return new EventRetention({ get: () => days } as unknown as ConfigService<AppConfig, true>);
  }

  expiresAt(createdAt: Date): Date {
    return new Date(createdAt.getTime() + this.retentionMs);
  }
}
