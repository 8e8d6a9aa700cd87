import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model, trusted } from 'mongoose';
import { jobIdOfMessageId } from '../delivery/message-headers';
import { MessageLedger } from './message-ledger';
import { EmailJob } from './schemas/email-job.schema';

/** A message the worker sent, as provider events need it. */
export interface SentMessageRecord {
  jobId: string;
  appId: string | null;
  campaignId: string | null;
  contactId: string | null;
  /** The recipient (lower-cased), or an erased person's placeholder. */
  to: string | null;
}

/**
 * Finds the message a provider event names by the Message-ID the worker gave it, `<job id>@<sender domain>`
 * (SendEmailHandler): the message ledger's entry is read by `_id` (one lookup) and must carry exactly that
 * Message-ID. The ledger outlives the job (docs/retention.md); a job queued before the ledger existed is
 * read instead while it is kept.
 */
@Injectable()
export class SentMessageLookup {
  constructor(
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
    private readonly ledger: MessageLedger,
  ) {}

  async find(messageId: string): Promise<SentMessageRecord | null> {
    const jobId = jobIdOfMessageId(messageId);
    if (!isObjectIdOrHexString(jobId)) return null;
    const bare = messageId.replace(/^<|>$/g, '');
    const entry = await this.ledger.find(jobId);
    if (entry) {
      if (entry.messageId !== bare) return null;
      const { appId, campaignId, contactId, to } = entry;
      return { jobId, appId, campaignId, contactId, to };
    }
    return this.fromJob(jobId, bare);
  }

  /**
   * `find` for many Message-IDs at once: one read of the ledger, and one of the jobs for those it does not
   * hold. Every Message-ID asked is a key of the answer (null: no such message).
   */
  async findMany(messageIds: string[]): Promise<Map<string, SentMessageRecord | null>> {
    const found = new Map<string, SentMessageRecord | null>();
    const asked = messageIds.map((messageId) => ({
      messageId,
      jobId: jobIdOfMessageId(messageId),
      bare: messageId.replace(/^<|>$/g, ''),
    }));
    const valid = asked.filter(({ jobId }) => isObjectIdOrHexString(jobId));
    const entries = new Map(
      (await this.ledger.findMany(valid.map(({ jobId }) => jobId))).map((entry) => [
        String(entry._id),
        entry,
      ]),
    );
    const notInLedger = valid.filter(({ jobId }) => !entries.has(jobId));
    const jobs = await this.jobsById(notInLedger.map(({ jobId }) => jobId));
    for (const { messageId, jobId, bare } of asked) {
      const entry = entries.get(jobId);
      if (entry) {
        const { appId, campaignId, contactId, to } = entry;
        found.set(messageId, entry.messageId === bare ? { jobId, appId, campaignId, contactId, to } : null);
      } else {
        const job = jobs.get(jobId);
        found.set(messageId, job && job.messageId === bare ? recordOfJob(job) : null);
      }
    }
    return found;
  }

  /** Provider events about these messages: their ledger entries are kept for the full retention from `at`. */
  recordEvents(messages: SentMessageRecord[], at: Date): Promise<void> {
    return this.ledger.touchMany(
      messages.map((message) => message.jobId),
      at,
    );
  }

  private async fromJob(jobId: string, messageId: string): Promise<SentMessageRecord | null> {
    const job = (await this.jobsById([jobId])).get(jobId);
    return job && job.messageId === messageId ? recordOfJob(job) : null;
  }

  private async jobsById(jobIds: string[]): Promise<Map<string, EmailJob>> {
    if (jobIds.length === 0) return new Map();
    const jobs = await this.jobs
      .find(
        { _id: trusted({ $in: jobIds }) },
        { messageId: 1, appId: 1, campaignId: 1, 'payload.to': 1, 'payload.contactId': 1 },
      )
      .lean<EmailJob[]>()
      .exec();
    return new Map(jobs.map((job) => [String(job._id), job]));
  }
}

function recordOfJob(job: EmailJob): SentMessageRecord {
  const payload = job.payload as { to?: unknown; contactId?: unknown };
  return {
    jobId: String(job._id),
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    contactId: typeof payload.contactId === 'string' ? payload.contactId : null,
    to: typeof payload.to === 'string' ? payload.to : null,
  };
}
