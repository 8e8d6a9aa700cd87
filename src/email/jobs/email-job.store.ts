import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import {
  type AnyBulkWriteOperation,
  type Document,
  type FindCursor,
  MongoBulkWriteError,
  ObjectId,
  type WriteError,
} from 'mongodb';
import { Model } from 'mongoose';
import { isDuplicateKey } from '../../common/database/duplicate-key';
import { JobRetention } from './job-retention';
import type { SentMessage } from '../events/sent-message';
import {
  CLAIMABLE_STATUSES,
  EmailJob,
  type EmailJobStatus,
  type EmailJobType,
} from './schemas/email-job.schema';

export interface NewJob {
  type: EmailJobType;
  payload: Record<string, unknown>;
  idempotencyKey: string;
  priority: number;
  scheduledAt: Date;
  maxAttempts: number;
  appId: string | null;
  campaignId: string | null;
  /** A job that is never to run: inserted `completed` with this result (a recipient a plan skips). */
  skipped?: Record<string, unknown>;
}

export interface EnqueuedJob {
  id: string;
  idempotencyKey: string;
  /** False when a job with this idempotency key already existed. */
  created: boolean;
}

/** A due job as the worker's scan sees it: enough to check suppression before claiming. */
export interface DueJob {
  _id: ObjectId;
  claimKey: string;
  type: EmailJobType;
  priority: number;
  to?: string;
}

/** What a worker decided about a job it holds. */
export type JobOutcome =
  | { status: 'completed'; result: Record<string, unknown>; messageId?: string }
  | { status: 'failed'; error: string; retryAt: Date }
  | { status: 'dead'; error: string };

export interface FinishedJob {
  id: ObjectId;
  attempts: number;
  lockToken: string;
  outcome: JobOutcome;
  /** The job's campaign (a campaign's messages and its plan), recounted once outcomes are recorded. */
  campaignId?: string | null;
  /** Who an `email.send` job's message is for: its `sent` event names them (SentEvents). */
  message?: SentMessage;
}

/**
 * A campaign's jobs by final state. `sent`: handed to the provider; `failed`: ended without delivery (dead,
 * or skipped because the address was suppressed); the rest of `total` is still on its way (pending,
 * processing, waiting for a retry, or any other state that is not final).
 */
export interface CampaignJobCounts {
  /** The plan has queued every message (completed), or will queue no more (dead). */
  planFinished: boolean;
  total: number;
  sent: number;
  failed: number;
}

/** States a job never leaves. */
const FINAL_STATUSES: readonly EmailJobStatus[] = ['completed', 'dead'];

export const LAPSED_DELIVERY_ERROR =
  'The worker stopped during delivery, so whether the message left is unknown; not retried, to avoid a duplicate';

/**
 * The queue's database operations. The hot path (scan, claim, finish) uses the driver directly: the filters
 * are built here, never from user input, and skipping Mongoose's document layer keeps each step to one
 * round trip for a whole batch (claims address jobs by claim key, outcomes by lock token: each a single
 * lookup in a unique index).
 */
@Injectable()
export class EmailJobStore {
  constructor(
    @InjectModel(EmailJob.name) private readonly model: Model<EmailJob>,
    private readonly retention: JobRetention,
  ) {}

  private get collection() {
    return this.model.collection;
  }

  /**
   * Inserts the jobs whose idempotency key is new and returns every job's id in input order (existing ids
   * for known keys). Two round trips at most: one unordered insert, one lookup of the duplicates.
   */
  async insert(jobs: NewJob[]): Promise<EnqueuedJob[]> {
    const now = new Date();
    const unique = new Map<string, NewJob & { _id: ObjectId }>();
    for (const job of jobs)
      if (!unique.has(job.idempotencyKey)) unique.set(job.idempotencyKey, { ...job, _id: new ObjectId() });
    const docs = [...unique.values()].map(({ skipped, ...job }) => ({
      ...job,
      attempts: 0,
      ...(skipped
        ? // Finished at birth: no claim key, so no worker ever takes it; retention removes it like any other.
          { status: 'completed', result: skipped, completedAt: now, expiresAt: this.retention.expiresAt(now) }
        : { status: 'pending', claimKey: claimKeyOf(job._id, 0) }),
      createdAt: now,
      updatedAt: now,
    }));
    const duplicates = new Set<string>();
    if (docs.length > 0) {
      try {
        await this.collection.insertMany(docs, { ordered: false });
      } catch (error) {
        if (!(error instanceof MongoBulkWriteError)) throw error;
        const writeErrors: WriteError[] = [error.writeErrors].flat();
        for (const writeError of writeErrors) {
          if (!isDuplicateKey(writeError)) throw error;
          duplicates.add(docs[writeError.index].idempotencyKey);
        }
      }
    }
    const existing = new Map<string, string>();
    if (duplicates.size > 0) {
      const found = await this.collection
        .find({ idempotencyKey: { $in: [...duplicates] } }, { projection: { idempotencyKey: 1 } })
        .toArray();
      for (const doc of found) existing.set(doc.idempotencyKey as string, String(doc._id));
    }
    return jobs.map((job) => {
      const key = job.idempotencyKey;
      const known = existing.get(key);
      return known
        ? { id: known, idempotencyKey: key, created: false }
        : { id: String(unique.get(key)!._id), idempotencyKey: key, created: true };
    });
  }

  /**
   * Due jobs, most urgent first, with the claim key of their next attempt, read in batches of `batchSize`
   * from one cursor for as long as the worker wants more (close the scan when done): the worker claims them
   * with `claimMany` after checking their addresses against the suppression list. The dev database filters
   * and sorts the whole queue for every such query, whatever its limit, so a worker reads one scan for as
   * long as it stays fresh rather than querying again for every batch.
   */
  scanDue(batchSize: number, now = new Date()): DueScan {
    return new DueScan(this.collection.find(dueFilter(now), { ...DUE_SCAN, batchSize }), batchSize);
  }

  /**
   * Takes scanned jobs for this worker in two round trips: one `bulkWrite` of updates by claim key (each
   * removes the key, so of several workers racing for a job exactly one gets it; a job changed since the
   * scan has another key and is not taken), then one read of the jobs that now carry this claim's tokens.
   * `lockTokenOf` must give a token unique to this claim of that job.
   */
  async claimMany(
    due: DueJob[],
    lockTokenOf: (job: DueJob) => string,
    leaseMs: number,
    now = new Date(),
  ): Promise<{ job: EmailJob; lockToken: string }[]> {
    if (due.length === 0) return [];
    const tokens = due.map(lockTokenOf);
    await this.collection.bulkWrite(
      due.map((job, i) => ({
        updateOne: {
          filter: { claimKey: job.claimKey },
          update: {
            $set: {
              status: 'processing',
              lockToken: tokens[i],
              leaseExpiresAt: new Date(now.getTime() + leaseMs),
              startedAt: now,
              updatedAt: now,
            },
            $unset: { claimKey: '' },
            $inc: { attempts: 1 },
          },
        },
      })),
      { ordered: false },
    );
    const claimed = await this.collection.find({ lockToken: { $in: tokens } }).toArray();
    return claimed.map((doc) => ({ job: doc as unknown as EmailJob, lockToken: doc.lockToken as string }));
  }

  /**
   * Records the outcomes of held jobs in one round trip. Each update names the holder's lock token, so a
   * worker whose lease was reaped cannot overwrite what happened since. Returns how many were recorded.
   */
  async finish(finished: FinishedJob[]): Promise<number> {
    if (finished.length === 0) return 0;
    const now = new Date();
    const operations: AnyBulkWriteOperation[] = finished.map(({ id, attempts, lockToken, outcome }) => ({
      updateOne: {
        // The token exists only while this claim holds the job: it is the whole guard.
        filter: { lockToken },
        update: {
          $set: {
            ...outcomeFields(outcome, now),
            ...(outcome.status === 'failed' ? {} : { expiresAt: this.retention.expiresAt(now) }),
            ...(outcome.status === 'failed' ? { claimKey: claimKeyOf(id, attempts) } : {}),
            updatedAt: now,
          },
          $unset: { lockToken: '', leaseExpiresAt: '' },
        },
      },
    }));
    const result = await this.collection.bulkWrite(operations, { ordered: false });
    return result.modifiedCount;
  }

  /**
   * Jobs whose worker stopped holding them (crash, kill, lost network) past their lease. A delivery may have
   * left before the worker died, so an `email.send` job is not sent again but ends `dead` with that reason;
   * a batch plan only enqueues with idempotency keys, so it is safe to run again and is put back as due.
   */
  async reapLapsedLeases(
    now = new Date(),
  ): Promise<{ dead: number; requeued: number; campaignIds: Set<string> }> {
    const lapsed = { status: 'processing', leaseExpiresAt: { $lte: now } };
    // One update per job, guarded by the lapsed holder's token, so the campaigns whose messages this reaper
    // ended are known (to recount them). A dead worker held few jobs.
    const sends = await this.collection
      .find({ ...lapsed, type: 'email.send' }, { projection: { campaignId: 1, lockToken: 1 } })
      .toArray();
    const campaignIds = new Set<string>();
    let dead = 0;
    for (const send of sends) {
      const result = await this.collection.updateOne(
        { lockToken: send.lockToken },
        {
          $set: {
            status: 'dead',
            lastError: LAPSED_DELIVERY_ERROR,
            completedAt: now,
            expiresAt: this.retention.expiresAt(now),
            updatedAt: now,
          },
          $unset: { lockToken: '', leaseExpiresAt: '' },
        },
      );
      dead += result.modifiedCount;
      const campaignId = send.campaignId as string | null | undefined;
      if (result.modifiedCount > 0 && campaignId) campaignIds.add(campaignId);
    }
    // Plans are rare: each gets the claim key of its next attempt, guarded by the lapsed holder's token.
    const plans = await this.collection
      .find({ ...lapsed, type: 'email.batch.plan' }, { projection: { attempts: 1, lockToken: 1 } })
      .toArray();
    let requeued = 0;
    for (const plan of plans) {
      const result = await this.collection.updateOne(
        { lockToken: plan.lockToken },
        {
          $set: {
            status: 'failed',
            lastError: 'The worker stopped while planning; planned again',
            scheduledAt: now,
            claimKey: claimKeyOf(plan._id, plan.attempts as number),
            updatedAt: now,
          },
          $unset: { lockToken: '', leaseExpiresAt: '' },
        },
      );
      requeued += result.modifiedCount;
    }
    return { dead, requeued, campaignIds };
  }

  /**
   * A campaign's jobs counted by final state, from one aggregation over `{campaignId, status, type,
   * messageId}` (on MongoDB that index covers it: no job document is read). Recounting instead of adding up
   * reports makes the figures exact whatever was lost or reported twice.
   */
  async campaignJobCounts(campaignId: string): Promise<CampaignJobCounts> {
    const groups = await this.collection
      .aggregate<{ _id: { type: EmailJobType; status: EmailJobStatus; delivered: boolean }; count: number }>([
        { $match: { campaignId } },
        {
          $group: {
            _id: {
              type: '$type',
              status: '$status',
              // A message handed to the provider has its Message-ID; a suppressed skip completes without one.
              delivered: { $cond: [{ $ifNull: ['$messageId', false] }, true, false] },
            },
            count: { $sum: 1 },
          },
        },
      ])
      .toArray();
    const counts: CampaignJobCounts = { planFinished: false, total: 0, sent: 0, failed: 0 };
    for (const { _id, count } of groups) {
      if (_id.type === 'email.batch.plan') {
        if (FINAL_STATUSES.includes(_id.status)) counts.planFinished = true;
        continue;
      }
      counts.total += count;
      if (_id.status === 'completed' && _id.delivered) counts.sent += count;
      else if (FINAL_STATUSES.includes(_id.status)) counts.failed += count;
    }
    return counts;
  }
}

/** Reads a scan of due jobs batch by batch (`EmailJobStore.scanDue`). */
export class DueScan {
  constructor(
    private readonly cursor: FindCursor<Document>,
    private readonly batchSize: number,
  ) {}

  /** The next due jobs (at most the batch size); empty once the scan has no more. */
  async next(): Promise<DueJob[]> {
    const docs: Document[] = [];
    while (docs.length < this.batchSize && (await this.cursor.hasNext())) {
      docs.push(...this.cursor.readBufferedDocuments(this.batchSize - docs.length));
    }
    return docs.map(dueJobOf);
  }

  /** Releases the server's cursor (the rest of the scan is not read). */
  close(): Promise<void> {
    return this.cursor.close();
  }
}

/** Claimable jobs whose time has come. */
const dueFilter = (now: Date) => ({ status: { $in: [...CLAIMABLE_STATUSES] }, scheduledAt: { $lte: now } });
/** What a scan reads of a due job, most urgent first. */
const DUE_SCAN = {
  projection: { claimKey: 1, type: 1, priority: 1, 'payload.to': 1 },
  sort: { priority: -1, scheduledAt: 1 },
} as const;

function dueJobOf(doc: Document): DueJob {
  return {
    _id: doc._id as ObjectId,
    claimKey: doc.claimKey as string,
    type: doc.type as EmailJobType,
    priority: doc.priority as number,
    to: (doc.payload as { to?: string } | undefined)?.to,
  };
}

/** The key a claimable job is claimed by, for the attempt that comes next. */
export function claimKeyOf(id: ObjectId, attempts: number): string {
  return `${String(id)}.${attempts}`;
}

function outcomeFields(outcome: JobOutcome, now: Date): Record<string, unknown> {
  switch (outcome.status) {
    case 'completed':
      return {
        status: 'completed',
        result: outcome.result,
        completedAt: now,
        ...(outcome.messageId ? { messageId: outcome.messageId } : {}),
      };
    case 'failed':
      return { status: 'failed', lastError: outcome.error, scheduledAt: outcome.retryAt };
    case 'dead':
      return { status: 'dead', lastError: outcome.error, completedAt: now };
  }
}
