import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { AppsService } from '../apps/apps.service';
import type { Pagination } from '../common/http/envelope';
import { findPage } from '../common/pagination/pagination';
import type { Priority } from '../common/priority';
import { countByFields } from '../common/stats/count-by';
import { findScoped, updateScoped } from '../common/tenancy/scoped';
import type {
  CreateFeedbackDto,
  FeedbackStats,
  ListFeedbackQuery,
  UpdateFeedbackDto,
} from './dto/feedback.dto';
import { FeedbackCreatedEvent, FeedbackEvents } from './feedback.events';
import { Feedback, FeedbackStatus } from './schemas/feedback.schema';

@Injectable()
export class FeedbackService {
  constructor(
    @InjectModel(Feedback.name) private readonly feedback: Model<Feedback>,
    private readonly apps: AppsService,
    private readonly events: EventEmitter2,
  ) {}

  /** Anonymous submission: the app must exist and be active (404 otherwise, without saying which). */
  async submit(appId: string, dto: CreateFeedbackDto): Promise<Feedback> {
    await this.apps.requireActiveApp(appId);
    const created = (await this.feedback.create({ ...dto, appId })).toObject<Feedback>();
    this.events.emit(FeedbackEvents.Created, {
      appId,
      feedbackId: String(created._id),
      type: created.type,
      subject: created.subject,
    } satisfies FeedbackCreatedEvent);
    return created;
  }

  list(appId: string, query: ListFeedbackQuery): Promise<{ items: Feedback[]; pagination: Pagination }> {
    const filter: Record<string, unknown> = { appId };
    if (query.type) filter.type = query.type;
    if (query.status) filter.status = query.status;
    if (query.priority) filter.priority = query.priority;
    const direction = query.sortOrder === 'asc' ? 1 : -1;
    return findPage(this.feedback, {
      filter,
      sort: {
        [query.sortBy]: direction,
        ...(query.sortBy === 'createdAt' ? {} : { createdAt: -1 as const }),
      },
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  get(appId: string, id: string): Promise<Feedback> {
    return findScoped(this.feedback, appId, id, 'Feedback not found');
  }

  async stats(appId: string): Promise<FeedbackStats> {
    const { total, by } = await countByFields(this.feedback, { appId }, ['type', 'status'] as const);
    return { total, byType: by.type, byStatus: by.status };
  }

  update(appId: string, id: string, dto: UpdateFeedbackDto): Promise<Feedback> {
    return this.set(appId, id, { ...dto });
  }

  setStatus(appId: string, id: string, status: FeedbackStatus): Promise<Feedback> {
    return this.set(appId, id, { status });
  }

  setPriority(appId: string, id: string, priority: Priority): Promise<Feedback> {
    return this.set(appId, id, { priority });
  }

  async remove(appId: string, id: string): Promise<void> {
    const found = await this.get(appId, id);
    await this.feedback.deleteOne({ _id: found._id, appId }).exec();
  }

  private set(appId: string, id: string, fields: Record<string, unknown>) {
    return updateScoped(this.feedback, appId, id, fields, 'Feedback not found');
  }
}
