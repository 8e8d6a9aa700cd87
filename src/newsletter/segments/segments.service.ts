import { BadRequestException, ConflictException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import type { Pagination } from '../../common/http/envelope';
import { findPage, type PaginationQueryDto } from '../../common/pagination/pagination';
import { COUNT_CAP } from '../../common/stats/capped-count';
import { findScoped } from '../../common/tenancy/scoped';
import type { AudienceMember } from '../../contacts/contacts.service';
import { NewsletterTopicsService } from '../../contacts/topics/newsletter-topics.service';
import { Campaign } from '../campaigns/schemas/campaign.schema';
import {
  type CreateSegmentDto,
  type SegmentFilterDto,
  toSegmentFilter,
  type UpdateSegmentDto,
} from './dto/segment.dto';
import { Segment } from './schemas/segment.schema';
import { SegmentMembers } from './segment-members';

const NOT_FOUND = 'Segment not found';
export const SEGMENT_IN_USE = 'A draft or scheduled campaign targets this segment';
/** People a preview reads per batch, and at most in all: a request's work does not grow with the app. */
const PREVIEW_BATCH = 500;
export const PREVIEW_READ_MAX = 100_000;

export interface SegmentPreview {
  count: number;
  countCapped: boolean;
  people: AudienceMember[];
}

/**
 * An app's segments (docs/api/newsletters.md "Segments"): saved filters a campaign can target. A segment
 * a draft or scheduled campaign names cannot be deleted; its filter is read when the campaign starts.
 */
@Injectable()
export class SegmentsService {
  constructor(
    @InjectModel(Segment.name) private readonly segments: Model<Segment>,
    @InjectModel(Campaign.name) private readonly campaigns: Model<Campaign>,
    private readonly apps: AppsService,
    private readonly topics: NewsletterTopicsService,
    private readonly members: SegmentMembers,
  ) {}

  async list(
    appId: string,
    query: PaginationQueryDto,
  ): Promise<{ items: Segment[]; pagination: Pagination }> {
    await this.apps.requireApp(appId);
    return findPage(this.segments, {
      filter: { appId },
      sort: { createdAt: -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  async create(appId: string, dto: CreateSegmentDto, createdBy: string): Promise<Segment> {
    await this.apps.requireApp(appId);
    await this.checkFilter(appId, dto.filter);
    const created = await this.segments.create({
      appId,
      name: dto.name,
      filter: toSegmentFilter(dto.filter),
      createdBy,
    });
    return created.toObject<Segment>();
  }

  async get(appId: string, id: string): Promise<Segment> {
    await this.apps.requireApp(appId);
    return findScoped(this.segments, appId, id, NOT_FOUND);
  }

  async update(appId: string, id: string, dto: UpdateSegmentDto): Promise<Segment> {
    const segment = await this.get(appId, id);
    if (dto.filter) await this.checkFilter(appId, dto.filter);
    const set = {
      ...(dto.name !== undefined ? { name: dto.name } : {}),
      ...(dto.filter ? { filter: toSegmentFilter(dto.filter) } : {}),
    };
    return this.segments
      .findOneAndUpdate({ _id: segment._id, appId }, { $set: set }, { returnDocument: 'after' })
      .lean<Segment>()
      .orFail()
      .exec();
  }

  async remove(appId: string, id: string): Promise<void> {
    const segment = await this.get(appId, id);
    const inUse = await this.campaigns
      .exists({ appId, segmentId: String(segment._id), status: trusted({ $in: ['draft', 'scheduled'] }) })
      .exec();
    if (inUse) throw new ConflictException(SEGMENT_IN_USE);
    await this.segments.deleteOne({ _id: segment._id, appId }).exec();
  }

  /**
   * The count (up to COUNT_CAP, reading at most PREVIEW_READ_MAX people) and the first `limit` members,
   * by the same walk a campaign's plan makes.
   */
  async preview(appId: string, id: string, limit: number): Promise<SegmentPreview> {
    const segment = await this.get(appId, id);
    const people: AudienceMember[] = [];
    let count = 0;
    let read = 0;
    for await (const batch of this.members.batches(appId, segment.filter ?? {}, null, PREVIEW_BATCH)) {
      count += batch.people.length;
      read += PREVIEW_BATCH;
      for (const person of batch.people) if (people.length < limit) people.push(person);
      if (count > COUNT_CAP || read >= PREVIEW_READ_MAX) {
        return { count: Math.min(count, COUNT_CAP), countCapped: true, people };
      }
    }
    return { count, countCapped: false, people };
  }

  /** The filter of a campaign starting now, or null when the segment is gone. */
  async filterOf(appId: string, id: string) {
    const segment = await this.segments.findOne({ _id: id, appId }).lean<Segment>().exec();
    return segment ? (segment.filter ?? {}) : null;
  }

  /** 400 naming the field: a segment of this app. */
  async requireSegment(appId: string, id: string, field: string): Promise<void> {
    const found = await this.segments.exists({ _id: id, appId }).exec();
    if (!found) throw new BadRequestException(`${field}: no segment with this id in this app`);
  }

  private async checkFilter(appId: string, filter: SegmentFilterDto): Promise<void> {
    if (filter.neverOpened && filter.openedWithinDays !== undefined) {
      throw new BadRequestException('filter.neverOpened cannot be combined with filter.openedWithinDays');
    }
    if (
      filter.subscribedAfter &&
      filter.subscribedBefore &&
      new Date(filter.subscribedAfter) >= new Date(filter.subscribedBefore)
    ) {
      throw new BadRequestException('filter.subscribedAfter must be before filter.subscribedBefore');
    }
    for (const key of filter.keepsTopics ?? [])
      await this.topics.requireTopic(appId, key, 'filter.keepsTopics');
  }
}
