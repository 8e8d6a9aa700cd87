import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model } from 'mongoose';
import { jobIdOfMessageId } from '../delivery/message-headers';
import { MessageLedger } from './message-ledger';
import type { MessageLedgerEntry } from './schemas/message-ledger.schema';
import { EmailJob } from './schemas/email-job.schema';

/** A message the worker sent, as provider events need it. */
export interface SentMessageRecord {
  jobId: string;
  /** The Message-ID the worker gave it. */
  messageId: string;
  appId: string | null;
  campaignId: string | null;
  contactId: string | null;
  /** The recipient (lower-cased), or an erased person's placeholder. */
  to: string | null;
}

const JOB_PROJECTION = { messageId: 1, appId: 1, campaignId: 1, 'payload.to': 1, 'payload.contactId': 1 };

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
    const jobId = jobIdOfMessageId(messageId);
    const bare = messageId.replace(/^<|>$/g, '');
    // Not one of ours: an id the provider gave the message (Resend's API answers with its own).
    if (!isObjectIdOrHexString(jobId)) return this.findByProviderId(bare);
    const entry = await this.ledger.find(jobId);
    if (entry) return entry.messageId === bare ? recordOfEntry(entry) : null;
    const job = await this.jobs.findById(jobId, JOB_PROJECTION).lean<EmailJob>().exec();
    return job && job.messageId === bare ? recordOfJob(job, bare) : null;
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

  /** A provider event about the message: its ledger entry is kept for the full retention from now. */
  recordEvent(message: SentMessageRecord, at: Date): Promise<void> {
    return this.ledger.touch(message.jobId, at);
  }
}

function recordOfEntry(entry: MessageLedgerEntry): SentMessageRecord {
  const { messageId, appId, campaignId, contactId, to } = entry;
  return { jobId: String(entry._id), messageId, appId, campaignId, contactId, to };
}

function recordOfJob(job: EmailJob, messageId: string): SentMessageRecord {
  const payload = job.payload as { to?: unknown; contactId?: unknown };
  return {
    jobId: String(job._id),
    messageId,
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    contactId: typeof payload.contactId === 'string' ? payload.contactId : null,
    to: typeof payload.to === 'string' ? payload.to : null,
  };
}
