import { Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model, type PipelineStage, SortOrder, Types } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { findByIdOr404, validObjectIdOr404 } from '../common/database/object-id';
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
 * lookup per want on the unique (wantId, voterId) index, in the command that reads the wants. Only this
 * app's votes count: a vote another app wrote for the want lives only until its toggle finds no want.
 */
const votedBy = (appId: string, voterId: string): PipelineStage.FacetPipelineStage => ({
  $lookup: {
    from: WANT_VOTES_COLLECTION,
    let: { wantId: '$_id' },
    pipeline: [
      { $match: { voterId, appId, $expr: { $eq: ['$wantId', '$$wantId'] } } },
      { $limit: 1 },
      { $project: { _id: 1 } },
    ],
    as: 'votedBy',
  },
});

const WANT_NOT_FOUND = 'Want not found';

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
      [votedBy(appId, voterId)],
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
    return findScoped(this.wants, appId, id, WANT_NOT_FOUND);
  }

  /** The want of this app with whether `voterId` has voted for it, in one command; 404 as `get`. */
  async getForVoter(appId: string, id: string, voterId: string): Promise<WantForVoter> {
    const found = await findByIdOr404(id, WANT_NOT_FOUND, async (_id) => {
      const [want] = await this.wants
        .aggregate<WantWithVote>([
          // An aggregation casts nothing: the id as the ObjectId it is stored as.
          { $match: { _id: new Types.ObjectId(_id), appId } },
          { $limit: 1 },
          votedBy(appId, voterId),
        ])
        .exec();
      return want ?? null;
    });
    return forVoter(found);
  }

  /**
   * Toggles the voter's vote: three commands to vote, four to take it back
   * (docs/decisions/data-vote-without-a-read.md). The want is found first, scoped by `appId`, so a vote is
   * only ever written for a want of the caller's app: a vote written before that check could block another
   * app's voter of the same name, and for good if the process died before deleting it. The unique (wantId,
   * voterId) index decides: an insert that succeeds adds a vote, a duplicate means the vote exists and is
   * removed. Each vote record created or deleted moves `voteCount` by exactly one, so the count matches the
   * records under any concurrency.
   */
  async toggleVote(
    appId: string,
    id: string,
    voterId: string,
  ): Promise<{ voteCount: number; hasVoted: boolean }> {
    const wantId = new Types.ObjectId(validObjectIdOr404(id, WANT_NOT_FOUND));
    if (!(await this.wants.exists({ _id: wantId, appId }).exec()))
      throw new NotFoundException(WANT_NOT_FOUND);
    const vote = { wantId, voterId, appId };
    if (await this.insertVote(vote)) {
      const counted = await this.moveVoteCount(appId, wantId, 1);
      if (counted) return { voteCount: counted.voteCount, hasVoted: true };
      // The want was deleted meanwhile: its vote goes with it.
      await this.votes.deleteOne(vote).exec();
      throw new NotFoundException(WANT_NOT_FOUND);
    }
    const removed = await this.votes.deleteOne(vote).exec();
    if (removed.deletedCount === 1) {
      const counted = await this.moveVoteCount(appId, wantId, -1);
      if (counted) return { voteCount: counted.voteCount, hasVoted: false };
      throw new NotFoundException(WANT_NOT_FOUND);
    }
    // A concurrent toggle of the same voter took the vote back first.
    const { want, hasVoted } = await this.getForVoter(appId, id, voterId);
    return { voteCount: want.voteCount, hasVoted };
  }

  /** True when the vote was written, false when the voter's vote on that want exists already. */
  private async insertVote(vote: Pick<WantVote, 'wantId' | 'voterId' | 'appId'>): Promise<boolean> {
    try {
      await this.votes.create(vote);
      return true;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      return false;
    }
  }

  /** The want's count after moving it by `delta`, or null when this app has no such want. */
  private moveVoteCount(appId: string, wantId: Types.ObjectId, delta: 1 | -1) {
    return this.wants
      .findOneAndUpdate(
        { _id: wantId, appId },
        { $inc: { voteCount: delta } },
        { returnDocument: 'after', timestamps: false, projection: { voteCount: 1 } },
      )
      .lean<Pick<Want, 'voteCount'>>()
      .exec();
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
    return updateScoped(this.wants, appId, id, fields, WANT_NOT_FOUND);
  }
}

function pageQuery(appId: string, query: ListWantsQuery) {
  const filter: Record<string, unknown> = { appId };
  if (query.status) filter.status = query.status;
  if (query.category) filter.category = query.category;
  return { filter, sort: SORTS[query.sort], page: query.page, limit: query.limit, after: query.after };
}
