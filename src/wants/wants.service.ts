import { Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model, type PipelineStage, SortOrder, Types } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { findByIdOr404 } from '../common/database/object-id';
import type { Pagination } from '../common/http/envelope';
import { aggregatePage, findPage } from '../common/pagination/pagination';
import type { Priority } from '../common/priority';
import { countByFields } from '../common/stats/count-by';
import { findScoped, updateScoped } from '../common/tenancy/scoped';
import type { CreateWantDto, ListWantsQuery, UpdateWantDto, WantForVoter, WantStats } from './dto/want.dto';
import { WANT_VOTES_COLLECTION, WantVote } from './schemas/want-vote.schema';
import { Want, WantSort, WantStatus } from './schemas/want.schema';
import { WantCreatedEvent, WantEvents, WantStatusChangedEvent } from './want.events';

/**
 * Ties break on `_id` in the direction of `createdAt`, so each sort is one walk of an index (want.schema.ts).
 */
const SORTS: Record<WantSort, Record<string, SortOrder>> = {
  votes: { voteCount: -1, createdAt: -1, _id: -1 },
  newest: { createdAt: -1, _id: -1 },
  oldest: { createdAt: 1, _id: 1 },
};

/**
 * Whether the voter voted for the want (`votedBy`: the vote's id, or nothing), joined to each want read: one
 * lookup per want on the unique (wantId, voterId) index, in the command that reads the wants.
 */
const votedBy = (voterId: string): PipelineStage.FacetPipelineStage => ({
  $lookup: {
    from: WANT_VOTES_COLLECTION,
    let: { wantId: '$_id' },
    pipeline: [
      { $match: { voterId, $expr: { $eq: ['$wantId', '$$wantId'] } } },
      { $limit: 1 },
      { $project: { _id: 1 } },
    ],
    as: 'votedBy',
  },
});

type WantWithVote = Want & { votedBy: unknown[] };

const forVoter = ({ votedBy: vote, ...want }: WantWithVote): WantForVoter => ({
  want,
  hasVoted: vote.length > 0,
});

@Injectable()
export class WantsService {
  constructor(
    @InjectModel(Want.name) private readonly wants: Model<Want>,
    @InjectModel(WantVote.name) private readonly votes: Model<WantVote>,
    private readonly events: EventEmitter2,
  ) {}

  async list(appId: string, query: ListWantsQuery): Promise<{ items: Want[]; pagination: Pagination }> {
    return findPage(this.wants, pageQuery(appId, query));
  }

  /**
   * A page of the public board, each want with whether `voterId` has voted for it: the page, its total and
   * the votes in one command (the route every client app calls).
   */
  async listForVoter(
    appId: string,
    query: ListWantsQuery,
    voterId: string,
  ): Promise<{ items: WantForVoter[]; pagination: Pagination }> {
    const { items, pagination } = await aggregatePage<WantWithVote, Want>(
      this.wants,
      pageQuery(appId, query),
      [votedBy(voterId)],
    );
    return { items: items.map(forVoter), pagination };
  }

  async create(appId: string, dto: CreateWantDto): Promise<Want> {
    const created = await this.wants.create({ ...dto, appId });
    const want = created.toObject<Want>();
    this.events.emit(WantEvents.Created, {
      appId,
      wantId: String(want._id),
      title: want.title,
      category: want.category,
    } satisfies WantCreatedEvent);
    return want;
  }

  /** The want of this app, or 404 (another app's want is not found either). */
  get(appId: string, id: string): Promise<Want> {
    return findScoped(this.wants, appId, id, 'Want not found');
  }

  /** The want of this app with whether `voterId` has voted for it, in one command; 404 as `get`. */
  async getForVoter(appId: string, id: string, voterId: string): Promise<WantForVoter> {
    const found = await findByIdOr404(id, 'Want not found', async (_id) => {
      const [want] = await this.wants
        .aggregate<WantWithVote>([
          // An aggregation casts nothing: the id as the ObjectId it is stored as.
          { $match: { _id: new Types.ObjectId(_id), appId } },
          { $limit: 1 },
          votedBy(voterId),
        ])
        .exec();
      return want ?? null;
    });
    return forVoter(found);
  }

  private async hasVoted(voterId: string, wantId: Types.ObjectId): Promise<boolean> {
    return (await this.votes.exists({ voterId, wantId })) !== null;
  }

  /**
   * Toggles the voter's vote. The unique (wantId, voterId) index decides: an insert that succeeds adds a
   * vote, a duplicate means the vote exists and is removed. Each vote record created or deleted moves
   * `voteCount` by exactly one, so the count matches the records under any concurrency.
   */
  async toggleVote(
    appId: string,
    id: string,
    voterId: string,
  ): Promise<{ voteCount: number; hasVoted: boolean }> {
    const want = await this.get(appId, id);
    let delta: 1 | -1 | 0;
    try {
      await this.votes.create({ wantId: want._id, appId, voterId });
      delta = 1;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const removed = await this.votes.deleteOne({ wantId: want._id, voterId }).exec();
      delta = removed.deletedCount === 1 ? -1 : 0;
    }
    const updated =
      delta === 0
        ? await this.wants.findById(want._id).lean<Want>().exec()
        : await this.wants
            .findByIdAndUpdate(
              want._id,
              { $inc: { voteCount: delta } },
              { returnDocument: 'after', timestamps: false },
            )
            .lean<Want>()
            .exec();
    if (!updated) throw new NotFoundException('Want not found');
    return {
      voteCount: updated.voteCount,
      hasVoted: delta === 1 || (delta === 0 && (await this.hasVoted(voterId, want._id))),
    };
  }

  async stats(appId: string): Promise<WantStats> {
    const { total, by } = await countByFields(this.wants, { appId }, [
      'status',
      'category',
      'priority',
    ] as const);
    return { total, byStatus: by.status, byCategory: by.category, byPriority: by.priority };
  }

  async update(appId: string, id: string, dto: UpdateWantDto): Promise<Want> {
    return this.set(appId, id, { ...dto });
  }

  async setPriority(appId: string, id: string, priority: Priority): Promise<Want> {
    return this.set(appId, id, { priority });
  }

  async setStatus(appId: string, id: string, status: WantStatus): Promise<Want> {
    const before = await this.get(appId, id);
    const updated = await this.set(appId, id, { status });
    if (before.status !== status) {
      this.events.emit(WantEvents.StatusChanged, {
        appId,
        wantId: String(updated._id),
        title: updated.title,
        from: before.status,
        to: status,
      } satisfies WantStatusChangedEvent);
    }
    return updated;
  }

  /** Deletes the want and its votes (votes first, so no vote outlives its want). */
  async remove(appId: string, id: string): Promise<void> {
    const want = await this.get(appId, id);
    await this.votes.deleteMany({ wantId: want._id }).exec();
    await this.wants.deleteOne({ _id: want._id, appId }).exec();
  }

  private set(appId: string, id: string, fields: Record<string, unknown>) {
    return updateScoped(this.wants, appId, id, fields, 'Want not found');
  }
}

function pageQuery(appId: string, query: ListWantsQuery) {
  const filter: Record<string, unknown> = { appId };
  if (query.status) filter.status = query.status;
  if (query.category) filter.category = query.category;
  return { filter, sort: SORTS[query.sort], page: query.page, limit: query.limit, after: query.after };
}
