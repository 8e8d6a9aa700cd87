import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model } from 'mongoose';
import { jobIdOfMessageId } from '../delivery/message-headers';
import { MessageLedger } from './message-ledger';
import { EmailJob } from './schemas/email-job.schema';

/** A message the worker sent, as provider events need it. */
export interface SentMessageRecord {
  jobId: string;
  /** Our Message-ID for it (`<job id>@<domain>`), whichever id the event named it by. */
  messageId: string;
  appId: string | null;
  campaignId: string | null;
  contactId: string | null;
  /** The recipient (lower-cased), or an erased person's placeholder. */
  to: string | null;
}

/**
 * Finds the message a provider event names: by the Message-ID the worker gave it, `<job id>@<sender
 * domain>` (SendEmailHandler), the message ledger's entry read by `_id` (one lookup) and carrying exactly
 * that Message-ID; or by the provider's own id for it (an API transport's answer, such as Resend's `id`),
 * read from the ledger's index of those. The ledger outlives the job (docs/retention.md); a job queued
 * before the ledger existed is read instead while it is kept.
 */
@Injectable()
export class SentMessageLookup {
  constructor(
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
    private readonly ledger: MessageLedger,
  ) {}

  async find(messageId: string): Promise<SentMessageRecord | null> {
    const jobId = jobIdOfMessageId(messageId);
    if (!isObjectIdOrHexString(jobId)) return this.findByProviderMessageId(messageId);
    const bare = messageId.replace(/^<|>$/g, '');
    const entry = await this.ledger.find(jobId);
    if (entry) {
      if (entry.messageId !== bare) return null;
      const { appId, campaignId, contactId, to } = entry;
      return { jobId, messageId: bare, appId, campaignId, contactId, to };
    }
    return this.fromJob(jobId, bare);
  }

  /** The message a provider's own id names (recorded from the provider's answer when it was sent). */
  async findByProviderMessageId(providerMessageId: string): Promise<SentMessageRecord | null> {
    const entry = await this.ledger.findByProviderMessageId(providerMessageId);
    if (!entry) return null;
    const { messageId, appId, campaignId, contactId, to } = entry;
    return { jobId: String(entry._id), messageId, appId, campaignId, contactId, to };
  }

  /** A provider event about the message: its ledger entry is kept for the full retention from now. */
  recordEvent(message: SentMessageRecord, at: Date): Promise<void> {
    return this.ledger.touch(message.jobId, at);
  }

  private async fromJob(jobId: string, messageId: string): Promise<SentMessageRecord | null> {
    const job = await this.jobs
      .findById(jobId, { messageId: 1, appId: 1, campaignId: 1, 'payload.to': 1, 'payload.contactId': 1 })
      .lean<EmailJob>()
      .exec();
    if (!job || job.messageId !== messageId) return null;
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
}
