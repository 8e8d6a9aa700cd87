import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { findByIdOr404 } from '../../common/database/object-id';
import type { Pagination } from '../../common/http/envelope';
import { findPage } from '../../common/pagination/pagination';
import { countByFields } from '../../common/stats/count-by';
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
    if (query.campaignId) filter.campaignId = query.campaignId;
    return findPage(this.jobs, { filter, sort: { createdAt: -1 }, page: query.page, limit: query.limit });
  }

  get(id: string): Promise<EmailJob> {
    return findByIdOr404(id, 'E-mail job not found', (_id) =>
      this.jobs.findById(_id).lean<EmailJob>().exec(),
    );
  }

  async stats(campaignId?: string): Promise<EmailJobStats> {
    const { total, by } = campaignId
      ? await countByFields(this.jobs, { campaignId }, ['status'] as const)
      : await this.countByStatus();
    const counters = {
      pending: by.status.pending ?? 0,
      processing: by.status.processing ?? 0,
      completed: by.status.completed ?? 0,
      failed: by.status.failed ?? 0,
      dead: by.status.dead ?? 0,
      total,
    };
    const finished = counters.completed + counters.dead;
    const percentage = total === 0 ? 0 : Math.floor((finished / total) * 100);
    return { ...counters, progress: { ...counters, percentage } };
  }

  /**
   * The whole queue's counts, one count per status on the `{status, …}` index: each reads only the keys of
   * its status, never the documents, where one grouping over the collection would read every job.
   */
  private async countByStatus(): Promise<{ total: number; by: { status: Record<string, number> } }> {
    const counts = await Promise.all(
      EMAIL_JOB_STATUSES.map((status) => this.jobs.countDocuments({ status }).exec()),
    );
    const status = Object.fromEntries(EMAIL_JOB_STATUSES.map((name, i) => [name, counts[i]]));
    return { total: counts.reduce((sum, count) => sum + count, 0), by: { status } };
  }
}
