import { ConflictException, Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { AnyBulkWriteOperation, Document, ObjectId } from 'mongodb';
import { Model } from 'mongoose';
import escapeStringRegexp from 'escape-string-regexp';
import { ContactEvents, type ContactErasedEvent } from '../../contacts/contact.events';
import type { EmailMessage } from './email-message';
import { EmailJobStore } from './email-job.store';
import { EmailJob, type EmailJobStatus, type EmailJobType } from './schemas/email-job.schema';
import { writeAll } from '../../common/database/bulk-writes';

export const ERASED_RECIPIENT_ERROR = "Cancelled: the recipient's personal data was erased";

/** An e-mail job as a person's data export shows it: what was sent and when, not the content. */
export interface RecipientEmail {
  _id: string;
  type: EmailJobType;
  status: EmailJobStatus;
  appId: string | null;
  campaignId: string | null;
  subject: string | null;
  template: { name: string; language?: string } | null;
  createdAt: Date;
  scheduledAt: Date;
  completedAt: Date | null;
}

/** Payload fields that hold no personal data: everything else goes when the recipient is erased. */
const KEPT_PAYLOAD_FIELDS = ['appId', 'template', 'campaignId', 'contactId'] as const;
/** Result fields that hold no personal data (the SMTP `accepted` list and answer name the address). */
const KEPT_RESULT_FIELDS = ['messageId', 'provider', 'skipped', 'reason'] as const;
/** Rounds of the scrub: jobs enqueued to the address while it runs are caught by the next round. */
const MAX_SCRUB_ROUNDS = 5;

/** The 409 of an erasure while an e-mail to the person is in flight. */
export const SENDING_TO_PERSON =
  'An e-mail to this person is being sent right now; try the delete again in a minute';

/**
 * The e-mail jobs addressed to one person: listed for a data export, and erased by a GDPR delete. Jobs
 * store the address lower-cased (EmailService), so both find them by exact match on the `payload.to` index.
 */
@Injectable()
export class RecipientJobsService {
  constructor(
    @InjectModel(EmailJob.name) private readonly jobs: Model<EmailJob>,
    private readonly store: EmailJobStore,
  ) {}

  private get collection() {
    return this.jobs.collection;
  }

  async addressedTo(email: string): Promise<RecipientEmail[]> {
    const docs = await this.collection
      .find(
        { 'payload.to': email.trim().toLowerCase() },
        {
          projection: {
            type: 1,
            status: 1,
            appId: 1,
            campaignId: 1,
            'payload.subject': 1,
            'payload.template': 1,
            createdAt: 1,
            scheduledAt: 1,
            completedAt: 1,
          },
          sort: { createdAt: 1 },
        },
      )
      .toArray();
    return docs.map((doc) => {
      const payload = (doc.payload ?? {}) as Partial<EmailMessage>;
      return {
        _id: String(doc._id),
        type: doc.type as EmailJobType,
        status: doc.status as EmailJobStatus,
        appId: (doc.appId as string | null) ?? null,
        campaignId: (doc.campaignId as string | null) ?? null,
        subject: payload.subject ?? null,
        template: payload.template ?? null,
        createdAt: doc.createdAt as Date,
        scheduledAt: doc.scheduledAt as Date,
        completedAt: (doc.completedAt as Date | undefined) ?? null,
      };
    });
  }

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased(event: ContactErasedEvent): Promise<void> {
    await this.erase(event.email, event.placeholder);
  }

  /**
   * Cancels what is still to be sent to the address (the engine's cancel: `dead`, and no worker that
   * scanned it already can claim it), then rewrites every job to it: the payload keeps only fields
   * without personal data, the address becomes `placeholder`, the result loses the SMTP recipient list
   * and the address leaves `lastError`. A job being sent right now (`processing`) cannot be rewritten
   * before its worker records the outcome, which may name the address: the erasure then stops with a 409
   * and is retried once the send has finished (at most the worker's lease). Safe to run again.
   */
  async erase(email: string, placeholder: string): Promise<void> {
    const address = email.trim().toLowerCase();
    // Plans first: a plan left with the person would enqueue new messages to them.
    await this.erasePlans(address);
    for (let round = 1; round <= MAX_SCRUB_ROUNDS; round++) {
      await this.cancelPending(address);
      const jobs = await this.collection
        .find(
          { 'payload.to': address, status: { $ne: 'processing' } },
          {
            projection: {
              ...projectionOf(KEPT_PAYLOAD_FIELDS, 'payload'),
              result: 1,
              lastError: 1,
              idempotencyKey: 1,
            },
          },
        )
        .toArray();
      if (jobs.length === 0) break;
      await writeAll(
        this.collection,
        jobs.map((job) => scrub(job, address, placeholder)),
      );
    }
    const inFlight = await this.collection.countDocuments({ 'payload.to': address });
    if (inFlight > 0) {
      throw new ConflictException(SENDING_TO_PERSON);
    }
  }

  private async cancelPending(address: string): Promise<void> {
    await this.store.cancel({ 'payload.to': address }, ERASED_RECIPIENT_ERROR);
  }

  /**
   * The person leaves every inline `recipients` plan (addresses are stored lower-cased and trimmed, as
   * EmailService.enqueueBatchPlan writes them), found through the plans' own index of recipients. A plan
   * still to run that is left without recipients is cancelled like a message.
   */
  private async erasePlans(address: string): Promise<void> {
    const plans = await this.collection
      .find(
        { type: 'email.batch.plan', 'payload.recipients.to': address },
        { projection: { 'payload.recipients': 1 } },
      )
      .toArray();
    const now = new Date();
    const emptied: ObjectId[] = [];
    const operations: AnyBulkWriteOperation[] = plans.map((plan) => {
      const recipients = ((plan.payload as { recipients: { to: string }[] }).recipients ?? []).filter(
        (recipient) => recipient.to !== address,
      );
      if (recipients.length === 0) emptied.push(plan._id);
      return {
        updateOne: {
          filter: { _id: plan._id },
          update: { $set: { 'payload.recipients': recipients, updatedAt: now } },
        },
      };
    });
    await writeAll(this.collection, operations);
    if (emptied.length > 0) await this.store.cancel({ _id: { $in: emptied } }, ERASED_RECIPIENT_ERROR, now);
  }
}

function projectionOf(fields: readonly string[], prefix: string): Record<string, 1> {
  return Object.fromEntries(fields.map((field) => [`${prefix}.${field}`, 1]));
}

function pick(source: unknown, fields: readonly string[]): Record<string, unknown> {
  const record = (source ?? {}) as Record<string, unknown>;
  return Object.fromEntries(fields.filter((field) => record[field] !== undefined).map((f) => [f, record[f]]));
}

function scrub(job: Document, address: string, placeholder: string): AnyBulkWriteOperation {
  const set: Record<string, unknown> = {
    payload: { ...pick(job.payload, KEPT_PAYLOAD_FIELDS), to: placeholder, erased: true },
    updatedAt: new Date(),
  };
  if (job.result !== undefined) set.result = pick(job.result, KEPT_RESULT_FIELDS);
  // An SMTP error usually quotes the recipient.
  if (typeof job.lastError === 'string') {
    set.lastError = job.lastError.replace(new RegExp(escapeStringRegexp(address), 'gi'), placeholder);
  }
  // A caller's key may name the address (the recipients planner's does); the job's id keeps it unique.
  if (typeof job.idempotencyKey === 'string' && job.idempotencyKey.toLowerCase().includes(address)) {
    set.idempotencyKey = `erased:${String(job._id)}`;
  }
  return {
    updateOne: { filter: { _id: job._id as ObjectId, 'payload.to': address }, update: { $set: set } },
  };
}
