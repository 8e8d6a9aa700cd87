import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, type QueryFilter, trusted } from 'mongoose';
import type { Pagination } from '../common/http/envelope';
import { findPage } from '../common/pagination/pagination';
import { type ChainBreak, ChainCheck } from './audit-chain';
import type { AuditLogQuery } from './dto/audit-log.dto';
import { AuditIntent } from './schemas/audit-intent.schema';
import { AuditRecord } from './schemas/audit-record.schema';

const DAY_MS = 86_400_000;
/** An intent older than this is not a request still running: its action's outcome is unknown. */
const STRAY_INTENT_AGE_MS = 10 * 60_000;

export interface AuditVerification {
  checked: number;
  firstBreak: ChainBreak | null;
  /** Actions whose intent was written but whose record never was (outcome unknown). */
  strayIntents: { id: string; action: string; startedAt: Date; actorId?: string }[];
}

/** Reading, checking and pruning the audit trail (the trail itself writes it: audit-trail.service.ts). */
@Injectable()
export class AuditLogService {
  constructor(
    @InjectModel(AuditRecord.name) private readonly records: Model<AuditRecord>,
    @InjectModel(AuditIntent.name) private readonly intents: Model<AuditIntent>,
  ) {}

  /**
   * Newest first. actor, targetId and appId each lead an index of their own (audit-record.schema.ts), so one
   * of them at a time; action and from/to (a range on the sort key) combine with any.
   */
  async list(query: AuditLogQuery): Promise<{ items: AuditRecord[]; pagination: Pagination }> {
    if ([query.actor, query.targetId, query.appId].filter(Boolean).length > 1) {
      throw new BadRequestException(
        'actor, targetId, appId: filter by one of them at a time (each combines with action, from and to)',
      );
    }
    const filter: QueryFilter<AuditRecord> = {};
    if (query.actor) {
      if (query.actor.includes('@')) filter.actorEmail = query.actor.trim().toLowerCase();
      else filter.actorId = query.actor;
    }
    if (query.targetId) filter.targetId = query.targetId;
    if (query.appId) filter.appId = query.appId;
    if (query.action) filter.action = query.action;
    if (query.from || query.to) {
      filter.at = trusted({
        ...(query.from ? { $gte: new Date(query.from) } : {}),
        ...(query.to ? { $lt: new Date(query.to) } : {}),
      });
    }
    return findPage(this.records, {
      filter,
      sort: { at: -1 },
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  /**
   * Walks the chain from its oldest kept record (retention deletes from the start:
   * docs/operations/audit-log.md) and stops at the first record that does not hold. Also lists the intents
   * left without a record.
   */
  async verify(): Promise<AuditVerification> {
    const check = new ChainCheck();
    let firstBreak: ChainBreak | null = null;
    const cursor = this.records
      .find({ seq: trusted({ $gt: 0 }) })
      .sort({ seq: 1 })
      .lean<AuditRecord>()
      .cursor({ batchSize: 1000 });
    for await (const record of cursor) {
      firstBreak = check.next(record);
      if (firstBreak) break;
    }
    await cursor.close();
    const stray = await this.intents
      .find({ startedAt: trusted({ $lt: new Date(Date.now() - STRAY_INTENT_AGE_MS) }) })
      .sort({ startedAt: 1 })
      .limit(100)
      .lean<AuditIntent[]>()
      .exec();
    return {
      checked: check.checked,
      firstBreak,
      strayIntents: stray.map((intent) => ({
        id: String(intent._id),
        action: intent.action,
        startedAt: intent.startedAt,
        actorId: intent.actorId,
      })),
    };
  }

  /**
   * Deletes the records older than `days`, as a prefix of the chain: the newest record older than the
   * cut-off gives a seq, and everything up to it goes. Deleting by time alone could leave a gap (records are
   * chained in the order actions finished, not started), which audit:verify would report as a break.
   */
  async sweep(days: number, now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - days * DAY_MS);
    const last = await this.records
      .findOne({ at: trusted({ $lt: cutoff }) }, { seq: 1 })
      .sort({ at: -1, _id: -1 })
      .lean<Pick<AuditRecord, 'seq'>>()
      .exec();
    await this.intents.deleteMany({ startedAt: trusted({ $lt: cutoff }) }).exec();
    if (!last) return 0;
    const { deletedCount } = await this.records.deleteMany({ seq: trusted({ $lte: last.seq }) }).exec();
    return deletedCount;
  }
}
