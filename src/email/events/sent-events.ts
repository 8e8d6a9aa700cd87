import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model, type Types } from 'mongoose';
import { type EmailJob, streamOf } from '../jobs/schemas/email-job.schema';
import { EmailEvent } from '../tracking/schemas/email-event.schema';
import { EmailEventLedger, type NewEmailEvent } from './email-event-ledger';
import type { SentMessage } from './sent-message';

/** The recipient fields of an `email.send` job (null for a batch plan, which sends nothing). */
export function sentMessageOf(job: EmailJob): SentMessage | undefined {
  if (job.type !== 'email.send') return undefined;
  const contactId = (job.payload as { contactId?: unknown }).contactId;
  return {
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    contactId: typeof contactId === 'string' ? contactId : null,
    stream: streamOf(job),
  };
}

/** A message the transport accepted, as its job's outcome records it. */
export interface SentSend {
  jobId: Types.ObjectId;
  messageId: string;
  provider: string;
  message: SentMessage;
  /** Sent by an attempt that followed one whose outcome was unknown (the job's `unknownOutcomes`). */
  resentAfterUnknown: boolean;
}

/** What a `sent` event tells of its job's message. */
export interface SentRecord {
  messageId: string;
  provider: string;
}

/**
 * The worker's `sent` events: one per message the SMTP server (or the dev outbox, or an API) accepted, so
 * campaign figures exist without a provider. Written in the step that records the jobs' outcomes, just
 * before them (EmailJobStore.finish), never from a buffer in memory: a process killed after the outcome
 * cannot take the event with it. Each event's `_id` is its job's `_id`, so a message has one `sent` event
 * however often its write is tried again, and a job whose worker died after the event (its outcome not yet
 * recorded) is found sent by the reaper instead of ending in doubt (docs/operations/email-delivery.md,
 * "Accounting").
 */
@Injectable()
export class SentEvents {
  constructor(
    private readonly ledger: EmailEventLedger,
    @InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>,
  ) {}

  /** Writes the events of these sends (those written before are refused by `_id`, not counted again). */
  async write(sends: SentSend[], now = new Date()): Promise<void> {
    if (sends.length === 0) return;
    await this.ledger.append(
      sends.map((send): NewEmailEvent => ({
        _id: send.jobId,
        appId: send.message.appId,
        contactId: send.message.contactId,
        campaignId: send.message.campaignId,
        stream: send.message.stream,
        messageId: send.messageId,
        provider: send.provider,
        type: 'sent',
        userAgent: null,
        automated: false,
        ...(send.resentAfterUnknown ? { resentAfterUnknown: true } : {}),
        createdAt: now,
      })),
    );
  }

  /** The `sent` events of these jobs, by job id (one lookup by `_id`). */
  async of(jobIds: Types.ObjectId[]): Promise<Map<string, SentRecord>> {
    if (jobIds.length === 0) return new Map();
    const found = await this.events.collection
      .find({ _id: { $in: jobIds }, type: 'sent' }, { projection: { messageId: 1, provider: 1 } })
      .toArray();
    return new Map(
      found.map((doc) => [
        String(doc._id),
        { messageId: doc.messageId as string, provider: doc.provider as string },
      ]),
    );
  }
}
