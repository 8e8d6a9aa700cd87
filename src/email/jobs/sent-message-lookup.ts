import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model, trusted } from 'mongoose';
import { jobIdOfMessageId } from '../delivery/message-headers';
import { MessageLedger } from './message-ledger';
import type { MessageLedgerEntry } from './schemas/message-ledger.schema';
import { EmailJob, type EmailStream, streamOf } from './schemas/email-job.schema';

/** A message the worker sent, as provider events need it. */
export interface SentMessageRecord {
  jobId: string;
  /** Our Message-ID for it (`<job id>@<domain>`), whichever id the event named it by. */
  messageId: string;
  appId: string | null;
  campaignId: string | null;
  contactId: string | null;
  stream: EmailStream;
  /** The recipient (lower-cased), or an erased person's placeholder. */
  to: string | null;
}

const JOB_PROJECTION = {
  messageId: 1,
  appId: 1,
  campaignId: 1,
  stream: 1,
  'payload.to': 1,
  'payload.contactId': 1,
};

/**
 * Finds the message a provider event names: by the Message-ID the worker gave it, `<job id>@<sender
 * domain>` (SendEmailHandler), whose ledger entry is read by `_id` and must carry exactly that Message-ID;
 * or by the provider's own id of it, recorded from the provider's answer to the send. The ledger outlives
 * the job (docs/operations/data-retention.md); a job queued before the ledger existed is read instead while
 * it is kept.
 */
@Injectable()
export class SentMessageLookup {
  constructor(
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
    private readonly ledger: MessageLedger,
  ) {}

  async find(messageId: string): Promise<SentMessageRecord | null> {
    return (await this.findMany([messageId])).get(messageId) ?? null;
  }

  /**
   * `find` for many ids at once: one read of the ledger, one of the jobs for the Message-IDs it does not
   * hold, and one indexed lookup per id that is not one of ours (an id the provider gave the message, as
   * Resend's API answers with its own). Every id asked is a key of the answer (null: no such message).
   */
  async findMany(messageIds: string[]): Promise<Map<string, SentMessageRecord | null>> {
    const found = new Map<string, SentMessageRecord | null>();
    const asked = messageIds.map((messageId) => ({
      messageId,
      jobId: jobIdOfMessageId(messageId),
      bare: messageId.replace(/^<|>$/g, ''),
    }));
    const ours = asked.filter(({ jobId }) => isObjectIdOrHexString(jobId));
    const entries = new Map(
      (await this.ledger.findMany(ours.map(({ jobId }) => jobId))).map((entry) => [String(entry._id), entry]),
    );
    const jobs = await this.jobsById(
      ours.filter(({ jobId }) => !entries.has(jobId)).map(({ jobId }) => jobId),
    );
    for (const { messageId, jobId, bare } of asked) {
      if (!isObjectIdOrHexString(jobId)) {
        found.set(messageId, await this.findByProviderId(bare));
        continue;
      }
      const entry = entries.get(jobId);
      const job = jobs.get(jobId);
      if (entry) found.set(messageId, entry.messageId === bare ? recordOfEntry(entry) : null);
      else found.set(messageId, job && job.messageId === bare ? recordOfJob(job, bare) : null);
    }
    return found;
  }

  /**
   * Finds the message by the provider's own id of it (Resend's API `id`, SES `mail.messageId`, SendGrid's
   * X-Message-Id): one indexed lookup in the ledger, then in the jobs for a message sent before the
   * ledger recorded provider ids.
   */
  async findByProviderId(providerMessageId: string): Promise<SentMessageRecord | null> {
    const entry = await this.ledger.findByProviderId(providerMessageId);
    if (entry) return recordOfEntry(entry);
    const job = await this.jobs
      .findOne({ providerMessageId: { $eq: providerMessageId } }, JOB_PROJECTION)
      .lean<EmailJob>()
      .exec();
    return job?.messageId ? recordOfJob(job, job.messageId) : null;
  }

  /** The Message-IDs of the latest messages to an address (lower-cased), newest first. */
  latestTo(address: string, limit: number): Promise<string[]> {
    return this.ledger.latestTo(address, limit);
  }

  /** A message by its job's id (a bounce that names the job: an SMTP refusal, a VERP address). */
  async byJobId(jobId: string): Promise<SentMessageRecord | null> {
    if (!isObjectIdOrHexString(jobId)) return null;
    const [entry] = await this.ledger.findMany([jobId]);
    if (entry) return recordOfEntry(entry);
    const job = (await this.jobsById([jobId])).get(jobId);
    return job?.messageId ? recordOfJob(job, job.messageId) : null;
  }

  /** Provider events about these messages: their ledger entries are kept for the full retention from `at`. */
  recordEvents(messages: SentMessageRecord[], at: Date): Promise<void> {
    return this.ledger.touchMany(
      messages.map((message) => message.jobId),
      at,
    );
  }

  private async jobsById(jobIds: string[]): Promise<Map<string, EmailJob>> {
    if (jobIds.length === 0) return new Map();
    const jobs = await this.jobs
      .find({ _id: trusted({ $in: jobIds }) }, JOB_PROJECTION)
      .lean<EmailJob[]>()
      .exec();
    return new Map(jobs.map((job) => [String(job._id), job]));
  }
}

function recordOfEntry(entry: MessageLedgerEntry): SentMessageRecord {
  const { messageId, appId, campaignId, contactId, to } = entry;
  return { jobId: String(entry._id), messageId, appId, campaignId, contactId, stream: streamOf(entry), to };
}

function recordOfJob(job: EmailJob, messageId: string): SentMessageRecord {
  const payload = job.payload as { to?: unknown; contactId?: unknown };
  return {
    jobId: String(job._id),
    messageId,
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    contactId: typeof payload.contactId === 'string' ? payload.contactId : null,
    stream: streamOf(job),
    to: typeof payload.to === 'string' ? payload.to : null,
  };
}
