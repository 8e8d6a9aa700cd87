import { Injectable } from '@nestjs/common';
import { ObjectId } from 'mongodb';
import { insertKeepingDuplicates } from '../../common/database/bulk-writes';
import { InjectKind, type KindRuntime } from '../../queue/kind-runtime';
import { ledgerMessageOf, type LedgerSend, MessageLedger } from './message-ledger';
import { type SentSend, SentEvents } from '../events/sent-events';
import { LeaseQueueStore, type Postponed } from '../../queue/lease-queue.store';
import type { RecordOf } from '../../queue/polling-worker';
import type { HeldJob, LapseRule } from '../../queue/queue-kind';
import { EMAIL_KIND, type EmailKindTypes } from './email-kind';
import {
  defaultStream,
  EMAIL_KIND_STATUSES,
  type EmailJobStatus,
  type EmailJobType,
  type EmailStream,
} from './schemas/email-job.schema';

export { type DueJob, type JobOutcome, LAPSED_DELIVERY_ERROR, LAPSED_REPEATABLE_ERROR } from './email-kind';

export interface NewJob {
  type: EmailJobType;
  payload: Record<string, unknown>;
  /** Default: `defaultStream`. */
  stream?: EmailStream;
  idempotencyKey: string;
  priority: number;
  scheduledAt: Date;
  maxAttempts: number;
  appId: string | null;
  campaignId: string | null;
  /** A job that is never to run: inserted `completed` with this result (a recipient a plan skips). */
  skipped?: Record<string, unknown>;
  /** Its key was never used (EnqueueOptions.keyIsNew): the message ledger need not be asked about it. */
  keyIsNew?: boolean;
}

export interface EnqueuedJob {
  id: string;
  idempotencyKey: string;
  /** False when a job with this idempotency key already existed. */
  created: boolean;
}

/** A finished job as the worker records it (the kind's record). */
export type FinishedJob = RecordOf<EmailKindTypes>;

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
  /**
   * Of `failed`: completed without being handed over (suppressed by then, or an address the rule refuses).
   */
  skipped: number;
}

/** States a job never leaves. */
const FINAL_STATUSES: readonly EmailJobStatus[] = [EMAIL_KIND_STATUSES.done, EMAIL_KIND_STATUSES.dead];

/**
 * The `email_jobs` kind of the lease-queue engine (src/queue/): scans, claims, handed marks, outcomes and
 * reaping are the engine's; what is the e-mail queue's own is here: inserting with idempotency keys, the
 * rule for a lapsed lease, and a campaign's counts.
 */
@Injectable()
export class EmailJobStore extends LeaseQueueStore<EmailKindTypes> {
  constructor(
    @InjectKind(EMAIL_KIND) runtime: KindRuntime<EmailKindTypes>,
    private readonly ledger: MessageLedger,
    private readonly sentEvents: SentEvents,
  ) {
    super(runtime);
  }

  /**
   * Inserts the jobs whose idempotency key is new and returns every job's id in input order (existing ids for
   * known keys: a job's, or the message ledger's once the job has expired). Throws when the insert failed
   * other than by duplicate keys (bulk-writes.ts): the caller's batch is retried as a whole. Four round trips
   * at most: the ledger's key lookup, one unordered insert, one lookup of the duplicates, the ledger's
   * insert.
   */
  async insert(jobs: NewJob[]): Promise<EnqueuedJob[]> {
    const now = new Date();
    const inLedger = await this.ledger.known(
      jobs.flatMap((job) => (job.type === 'email.send' && !job.keyIsNew ? [job.idempotencyKey] : [])),
    );
    const unique = new Map<string, NewJob & { _id: ObjectId }>();
    for (const job of jobs)
      if (!unique.has(job.idempotencyKey) && !inLedger.has(job.idempotencyKey))
        unique.set(job.idempotencyKey, { ...job, _id: new ObjectId() });
    const docs = [...unique.values()].map(({ skipped, keyIsNew: _new, ...job }) => ({
      ...job,
      stream: job.stream ?? defaultStream(job.type, job.campaignId),
      attempts: 0,
      ...(skipped
        ? // Finished at birth: no claim key, so no worker ever takes it; retention removes it like any other.
          { status: this.kind.statuses.done, result: skipped, ...this.endFields(now) }
        : this.newJobFields(job._id)),
      createdAt: now,
      updatedAt: now,
    }));
    // Only a duplicate key is an expected refusal (the job exists); any other failure, a whole batch lost
    // to an election or a closed connection included, fails the caller's batch: no job counts as created
    // unless the database acknowledged it.
    const refused = await insertKeepingDuplicates(this.collection, docs);
    const duplicates = new Set([...refused].map((index) => docs[index].idempotencyKey));
    // After the jobs' insert, whose unique key decides which jobs are new; an entry this write loses (a
    // crash in between) is created by the worker's recorded send.
    await this.ledger.recordQueued(
      docs
        .filter((doc) => doc.type === 'email.send' && !duplicates.has(doc.idempotencyKey))
        .map((doc) => ledgerMessageOf(doc)),
      now,
    );
    this.announceAdded(
      docs.filter((doc) => !duplicates.has(doc.idempotencyKey)),
      now,
    );
    const existing = new Map<string, string>(inLedger);
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
   * Records outcomes (the engine's `finish`), the ledger entries and `sent` events of sent messages first: a
   * failed write is retried as a whole by the finish buffer, and every write is safe to repeat (the events
   * are keyed by job). A worker killed between the events and the outcomes leaves jobs whose event says
   * they were sent: the reaper completes them (`lapseRules`).
   */
  override async finish(finished: (FinishedJob | Postponed)[]): Promise<number> {
    await this.ledger.recordSent(finished.flatMap(ledgerSendOf));
    await this.sentEvents.write(finished.flatMap(sentSendOf));
    return super.finish(finished);
  }

  /**
   * A lapsed send that was handed over and whose `sent` event exists did leave: its worker died after
   * writing the event and before the outcome. It ends `completed` as that event says, not in doubt.
   */
  protected override async lapseRules(jobs: HeldJob[]): Promise<LapseRule[]> {
    const handed = jobs.filter((job) => job.type === 'email.send' && job.handed !== 'no');
    const sent = await this.sentEvents.of(handed.map((job) => job._id));
    return jobs.map((job) => {
      const record = sent.get(String(job._id));
      if (!record) return this.lapsed(job);
      return {
        to: 'done',
        set: {
          status: this.kind.statuses.done,
          messageId: record.messageId,
          result: { messageId: record.messageId, provider: record.provider, recoveredFrom: 'sent event' },
        },
      };
    });
  }

  /**
   * Gives the jobs queued before streams existed their stream, by the rule `streamOf` reads (a campaign's:
   * `broadcast`; the rest `transactional`), so each lane's scan and the list's filter find them. Two
   * updates, run once per start; none matches once done.
   */
  async backfillStreams(): Promise<number> {
    const missing = { stream: { $exists: false } };
    const broadcast = await this.collection.updateMany(
      { ...missing, $or: [{ campaignId: { $ne: null } }, { type: 'email.batch.plan' }] },
      { $set: { stream: 'broadcast' } },
    );
    const transactional = await this.collection.updateMany(missing, { $set: { stream: 'transactional' } });
    return broadcast.modifiedCount + transactional.modifiedCount;
  }

  /**
   * Reaps lapsed leases (the engine's `reapLapsed`) and sums them up: sends ended `dead` (handed to SMTP,
   * so whether the message left is unknown), jobs put back (plans, sends never handed or handed to an
   * idempotent API), and the campaigns of the jobs this reaper ended (to recount them).
   */
  async reapLapsedLeases(
    now = new Date(),
  ): Promise<{ dead: number; done: number; requeued: number; campaignIds: Set<string> }> {
    return summarizeReaped(await this.reapLapsed(now));
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
    const counts: CampaignJobCounts = { planFinished: false, total: 0, sent: 0, failed: 0, skipped: 0 };
    for (const { _id, count } of groups) {
      if (_id.type === 'email.batch.plan') {
        if (FINAL_STATUSES.includes(_id.status)) counts.planFinished = true;
        continue;
      }
      counts.total += count;
      if (_id.status === 'completed' && _id.delivered) counts.sent += count;
      else if (FINAL_STATUSES.includes(_id.status)) counts.failed += count;
      if (_id.status === 'completed' && !_id.delivered) counts.skipped += count;
    }
    return counts;
  }
}

/** The ledger's record of a send, for a finished `email.send` job whose message left. */
function ledgerSendOf(record: FinishedJob | Postponed): LedgerSend[] {
  if (!('outcome' in record) || !record.ledger) return [];
  const { outcome } = record;
  if (outcome.status !== 'completed' || !outcome.messageId) return [];
  const { provider } = outcome.result as { provider?: unknown };
  return [
    {
      message: record.ledger,
      messageId: outcome.messageId,
      provider: typeof provider === 'string' ? provider : 'smtp',
      providerMessageId: outcome.providerMessageId,
    },
  ];
}

/** The `sent` event of a finished `email.send` job whose message left. */
function sentSendOf(record: FinishedJob | Postponed): SentSend[] {
  if (!('outcome' in record) || !record.message) return [];
  const { outcome } = record;
  if (outcome.status !== 'completed' || !outcome.messageId) return [];
  const { provider } = outcome.result as { provider?: unknown };
  return [
    {
      jobId: record.id,
      messageId: outcome.messageId,
      provider: typeof provider === 'string' ? provider : 'smtp',
      message: record.message,
      resentAfterUnknown: record.resentAfterUnknown === true,
    },
  ];
}

/** What the reaper did, by rule, and the campaigns of the jobs it ended. */
export function summarizeReaped(reaped: { job: HeldJob; rule: LapseRule }[]): {
  dead: number;
  /** Found sent by their `sent` event (the worker died before recording the outcome): completed. */
  done: number;
  requeued: number;
  campaignIds: Set<string>;
} {
  const campaignIds = new Set<string>();
  let dead = 0;
  let done = 0;
  for (const { job, rule } of reaped) {
    if (rule.to === 'done') done += 1;
    else if (rule.to !== 'dead') continue;
    else dead += 1;
    if (typeof job.campaignId === 'string') campaignIds.add(job.campaignId);
  }
  return { dead, done, requeued: reaped.length - dead - done, campaignIds };
}
