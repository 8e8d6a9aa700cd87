import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, trusted, Types } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { RetryLaterException } from '../common/http/retry-later.exception';
import { GENESIS_HASH, recordHash, type ChainedRecord } from './audit-chain';
import { AuditIntent } from './schemas/audit-intent.schema';
import { AuditRecord, type AuditOutcome } from './schemas/audit-record.schema';

/** What a request says about itself before it runs. */
export interface AuditStart {
  action: string;
  actorId?: string;
  targetId?: string;
  requestId?: string;
}

/** The whole record, once the outcome is known (seq, hashes and times are the trail's). */
export type AuditEntry = Pick<
  AuditRecord,
  'actorId' | 'actorEmail' | 'role' | 'action' | 'targetType' | 'targetId' | 'appId' | 'ip' | 'requestId'
> & { fields: string[]; outcome: AuditOutcome; status: number };

interface Tip {
  seq: number;
  hash: string;
}

/**
 * Appends lost to another writer before one gives up (503): each loss means another record got in, so only
 * a burst of that many concurrent staff writes on other instances exhausts it.
 */
const APPEND_ATTEMPTS = 50;

/**
 * The audit trail: a write-ahead intent before each audited action, and a hash-chained record after it
 * (docs/decisions/security-audit-write-ahead-intent.md). Several instances append to one chain: `seq` is
 * unique, so of two writers that read the same tip one inserts and the other gets a duplicate key, reads
 * the new tip and tries again. Each instance remembers the tip it last wrote or read, so an instance alone
 * appends in one round trip; a stale guess costs a duplicate key and a read.
 */
@Injectable()
export class AuditTrail {
  private readonly logger = new Logger(AuditTrail.name);
  private tip: Tip | null = null;

  constructor(
    @InjectModel(AuditRecord.name) private readonly records: Model<AuditRecord>,
    @InjectModel(AuditIntent.name) private readonly intents: Model<AuditIntent>,
  ) {}

  /** Writes the intent; the action runs only once this succeeded. */
  async begin(start: AuditStart): Promise<{ id: Types.ObjectId; startedAt: Date }> {
    const intent = { _id: new Types.ObjectId(), startedAt: new Date(), ...start };
    await this.intents.collection.insertOne(intent);
    return { id: intent._id, startedAt: intent.startedAt };
  }

  /**
   * Chains the record, then deletes the intent. The record is what counts: a failed intent delete leaves a
   * stray intent (listed by audit:verify) but the action is reported as it ended.
   */
  async finish(intent: { id: Types.ObjectId; startedAt: Date }, entry: AuditEntry): Promise<void> {
    await this.append(intent.startedAt, entry);
    await this.intents.collection.deleteOne({ _id: intent.id }).catch((error: Error) => {
      this.logger.warn(`Audit intent ${String(intent.id)} left behind: ${error.message}`);
    });
  }

  /** Appends one record at the end of the chain (see the class comment for concurrency). */
  async append(startedAt: Date, entry: AuditEntry): Promise<AuditRecord> {
    for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt += 1) {
      const tip = this.tip ?? (await this.readTip());
      const record: ChainedRecord = {
        _id: new Types.ObjectId(),
        seq: tip.seq + 1,
        prevHash: tip.hash,
        at: new Date(),
        startedAt,
        ...entry,
      };
      const chained = { ...withoutUndefined(record), hash: recordHash(record) };
      try {
        await this.records.collection.insertOne(chained);
        this.tip = { seq: chained.seq, hash: chained.hash };
        return chained;
      } catch (error) {
        this.tip = null;
        if (!isDuplicateKey(error)) throw error;
      }
    }
    throw new RetryLaterException(
      'The audit log is busy: the action was not carried out, try again',
      1,
      HttpStatus.SERVICE_UNAVAILABLE,
    );
  }

  /** The newest record's seq and hash, or the genesis of an empty chain (the unique `seq` index). */
  private async readTip(): Promise<Tip> {
    const last = await this.records
      .findOne({ seq: trusted({ $gt: 0 }) }, { seq: 1, hash: 1 })
      .sort({ seq: -1 })
      .lean<Tip>()
      .exec();
    return last ? { seq: last.seq, hash: last.hash } : { seq: 0, hash: GENESIS_HASH };
  }
}

/** Leaves out the fields a request did not have, so the stored record is the one that was hashed. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
