import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model } from 'mongoose';
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

const PROJECTION = { messageId: 1, appId: 1, campaignId: 1, 'payload.to': 1, 'payload.contactId': 1 };

/**
 * Finds the message a provider event names by the Message-ID the worker gave it, `<job id>@<sender domain>`
 * (SendEmailHandler): the job is read by `_id` (one lookup) and must carry exactly that Message-ID.
 */
@Injectable()
export class SentMessageLookup {
  constructor(@InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>) {}

  async find(messageId: string): Promise<SentMessageRecord | null> {
    const jobId = messageId.replace(/^</, '').split('@')[0];
    if (!isObjectIdOrHexString(jobId)) return null;
    const job = await this.jobs.findById(jobId, PROJECTION).lean<EmailJob>().exec();
    const bare = messageId.replace(/^<|>$/g, '');
    return job && job.messageId === bare ? recordOf(job, bare) : null;
  }

  /**
   * Finds the message by the provider's own id of it (SES `mail.messageId`, SendGrid's X-Message-Id,
   * Postmark's MessageID), recorded from the provider's SMTP answer when it was sent (one indexed lookup).
   */
  async findByProviderId(providerMessageId: string): Promise<SentMessageRecord | null> {
    const job = await this.jobs
      .findOne({ providerMessageId: { $eq: providerMessageId } }, PROJECTION)
      .lean<EmailJob>()
      .exec();
    return job?.messageId ? recordOf(job, job.messageId) : null;
  }
}

function recordOf(job: EmailJob, messageId: string): SentMessageRecord {
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
