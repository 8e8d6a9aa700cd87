import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { findByIdOr404 } from '../../common/database/object-id';
import type { Pagination } from '../../common/http/envelope';
import { findPage } from '../../common/pagination/pagination';
import { cappedCount, COUNT_LIMIT } from '../../common/stats/capped-count';
import type { EmailJobStats, ListEmailJobsQuery } from './dto/email-job.dto';
import { EMAIL_JOB_STATUSES, EmailJob } from './schemas/email-job.schema';

/** Read-only views of the queue for the back office. */
@Injectable()
export class EmailJobsService {
  constructor(@InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>) {}

  list(query: ListEmailJobsQuery): Promise<{ items: EmailJob[]; pagination: Pagination }> {
    const filter: Record<string, unknown> = {};
    if (query.status) filter.status = query.status;
    if (query.type) filter.type = query.type;
    if (query.stream) filter.stream = query.stream;
    if (query.campaignId) filter.campaignId = query.campaignId;
    return findPage(this.jobs, {
      filter,
      sort: { createdAt: -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  get(id: string): Promise<EmailJob> {
    return findByIdOr404(id, 'E-mail job not found', (_id) =>
      this.jobs.findById(_id).lean<EmailJob>().exec(),
    );
  }

  /**
   * The queue's (or a campaign's) jobs by status: one count per status on an index that leads with it
   * (`{status, …}`, or `{campaignId, status, …}`), each stopped after COUNT_CAP keys, so the answer costs
   * the same for a queue of a thousand jobs and of thirty days' worth; `capped` says a figure stopped there.
   */
  async stats(campaignId?: string): Promise<EmailJobStats> {
    const counts = await Promise.all(
      EMAIL_JOB_STATUSES.map(async (status) =>
        cappedCount(
          await this.jobs
            .countDocuments(campaignId ? { campaignId, status } : { status }, { limit: COUNT_LIMIT })
            .exec(),
        ),
      ),
    );
    const by = Object.fromEntries(EMAIL_JOB_STATUSES.map((status, i) => [status, counts[i].count]));
    const total = counts.reduce((sum, { count }) => sum + count, 0);
    const counters = {
      pending: by.pending ?? 0,
      processing: by.processing ?? 0,
      completed: by.completed ?? 0,
      failed: by.failed ?? 0,
      dead: by.dead ?? 0,
      total,
    };
    const finished = counters.completed + counters.dead;
    const percentage = total === 0 ? 0 : Math.floor((finished / total) * 100);
    return {
      ...counters,
      progress: { ...counters, percentage },
      capped: counts.some(({ capped }) => capped),
    };
  }
}
