import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { cappedCount, COUNT_LIMIT } from '../../common/stats/capped-count';
import type { AppConfig } from '../../config/env';
import { EmailWorker } from './email-worker';
import { EMAIL_JOB_STATUSES, EmailJob, type EmailJobStatus } from './schemas/email-job.schema';

/** Jobs per status, each counted up to COUNT_CAP; `capped` when one of them stopped there. */
export type QueueDepth = Record<EmailJobStatus, number> & { capped: boolean };

export interface EmailWorkerState {
  /** Whether this process runs the worker (`EMAIL_WORKER_ENABLED`). */
  enabled: boolean;
  /** When this process's last worker run ended; null before the first (or when the worker is off). */
  lastRun: Date | null;
}

/** The queue and worker as an operator's probe sees them (`GET /health`). */
@Injectable()
export class EmailQueueStatus {
  constructor(
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
    private readonly worker: EmailWorker,
    private readonly config: ConfigService<AppConfig, true>,
  ) {}

  workerState(): EmailWorkerState {
    return {
      enabled: this.config.get('EMAIL_WORKER_ENABLED', { infer: true }),
      lastRun: this.worker.lastRunAt,
    };
  }

  /**
   * Jobs per status: one count per status, each an equality on the leading field of the queue's scan index,
   * stopped after COUNT_CAP keys (`completed` holds 30 days of jobs: counting it all on every refresh
   * would grow with the traffic) and by the server after `maxTimeMS`, so a huge queue cannot hold a probe.
   */
  async depth(maxTimeMS: number): Promise<QueueDepth> {
    const counts = await Promise.all(
      EMAIL_JOB_STATUSES.map(async (status) =>
        cappedCount(await this.jobs.collection.countDocuments({ status }, { maxTimeMS, limit: COUNT_LIMIT })),
      ),
    );
    const depth = Object.fromEntries(EMAIL_JOB_STATUSES.map((status, i) => [status, counts[i].count]));
    return { ...depth, capped: counts.some(({ capped }) => capped) } as QueueDepth;
  }
}
