import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { KindStatuses } from '../../../queue/queue-kind';

export const EMAIL_JOB_TYPES = ['email.send', 'email.batch.plan'] as const;
export type EmailJobType = (typeof EMAIL_JOB_TYPES)[number];

/**
 * `pending` → `processing` → `completed`. A failed attempt goes to `failed` with a later `scheduledAt` and is
 * claimed again; after `maxAttempts`, or on a permanent error, the job is `dead`.
 */
export const EMAIL_JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'dead'] as const;
export type EmailJobStatus = (typeof EMAIL_JOB_STATUSES)[number];

/** The statuses as the queue engine names them (`pending` and `failed` are claimable once due). */
export const EMAIL_KIND_STATUSES = {
  pending: 'pending',
  retrying: 'failed',
  held: 'processing',
  done: 'completed',
  dead: 'dead',
} as const satisfies KindStatuses;

export const DEFAULT_MAX_ATTEMPTS = 5;

/**
 * The message streams (docs/operations/email-delivery.md, "Streams"): `transactional` (mail a person asked
 * for, or about their account) and `broadcast` (campaigns, newsletters, batch sends). Each is a lane of the
 * queue with its own slots and rate budget.
 */
export const EMAIL_STREAMS = ['transactional', 'broadcast'] as const;
export type EmailStream = (typeof EMAIL_STREAMS)[number];

/** The stream of a new job that names none: a campaign's mail and a batch plan are broadcast. */
export const defaultStream = (type: EmailJobType, campaignId: string | null | undefined): EmailStream =>
  campaignId || type === 'email.batch.plan' ? 'broadcast' : 'transactional';

/** A job's stream; a job queued before streams existed is `broadcast` when it belongs to a campaign. */
export const streamOf = (job: { stream?: EmailStream | null; campaignId?: string | null }): EmailStream =>
  job.stream ?? (job.campaignId ? 'broadcast' : 'transactional');

@Schema({ collection: 'email_jobs', timestamps: true, minimize: false })
export class EmailJob {
  _id: Types.ObjectId;

  @Prop({ type: String, enum: EMAIL_JOB_TYPES, required: true }) type: EmailJobType;
  @Prop({ type: String, enum: EMAIL_JOB_STATUSES, default: 'pending' }) status: EmailJobStatus;
  /** Higher runs first within its stream. */
  @Prop({ default: 0 }) priority: number;
  /** Its lane of the queue (set when queued; `streamOf` reads a job queued before streams existed). */
  @Prop({ type: String, enum: EMAIL_STREAMS }) stream?: EmailStream;
  @Prop({ type: MongooseSchema.Types.Mixed, required: true }) payload: Record<string, unknown>;
  @Prop({ type: MongooseSchema.Types.Mixed }) result?: Record<string, unknown>;
  @Prop({ default: 0 }) attempts: number;
  @Prop({ default: DEFAULT_MAX_ATTEMPTS }) maxAttempts: number;
  @Prop() lastError?: string;

  /** Enqueuing the same key again returns the existing job (unique index). */
  @Prop({ required: true }) idempotencyKey: string;
  /** Copied out of the payload so lists and statistics can filter on them with an index. */
  @Prop({ type: String, default: null }) appId: string | null;
  @Prop({ type: String, default: null }) campaignId: string | null;
  /** The Message-ID the worker gave a delivered message, `<job id>@<sender domain>` (what webhooks name). */
  @Prop() messageId?: string;
  /**
   * The provider's own id of the message, when its SMTP answer names one (SES `250 Ok <id>`, SendGrid's
   * `queued as <X-Message-Id>`): the events that do not pass our Message-ID back name this one.
   */
  @Prop() providerMessageId?: string;

  /** Due time: the worker claims the job once it has passed (also the backoff of a failed attempt). */
  @Prop({ required: true }) scheduledAt: Date;
  @Prop() startedAt?: Date;
  @Prop() completedAt?: Date;
  /**
   * Set when the job ends (`completed` or `dead`): the TTL index removes it then
   * (`EMAIL_JOB_RETENTION_DAYS`).
   */
  @Prop() expiresAt?: Date;
  /**
   * Attempts given up with their outcome unknown (handed to the transport, then the worker died): a job sent
   * again after one says so here, and its `sent` event counts it as `resentAfterUnknown`.
   */
  @Prop() unknownOutcomes?: number;

  createdAt: Date;
  updatedAt: Date;
}

export const EmailJobSchema = SchemaFactory.createForClass(EmailJob);
// The engine adds its lease fields and their indexes (claims, outcomes, the reaper), and the index of a
// campaign's held messages (CampaignHolds.release), from QueueModule.forKind(EMAIL_KIND).
// Shape: find eq(campaignId) range(heldAt).
// Each index below names the query shapes it serves as the coverage gate records them
// (docs/operations/index-coverage.md); reviewed against a recorded run, none served nothing.
// Shape: email_jobs insert (unique rule) and find eq(idempotencyKey) (an enqueue's duplicates).
EmailJobSchema.index({ idempotencyKey: 1 }, { unique: true });
// EmailJobStore.scanDue, one scan per stream: status (equality, two values), the stream, then the scan's
// sort (priority desc, scheduledAt asc), then the scheduledAt bound (range on the last sort field), so a
// scan reads its stream's due jobs in order.
// Shapes: find eq(status,stream) sort(priority:-1,scheduledAt:1) range(scheduledAt); countDocuments
// eq(status).
EmailJobSchema.index({ status: 1, stream: 1, priority: -1, scheduledAt: 1 });
// The admin list filtered by stream, newest first. Shape: find eq(stream) sort(createdAt:-1,_id:-1).
EmailJobSchema.index({ stream: 1, createdAt: -1, _id: -1 });
// The admin list and statistics filters by campaign (and status: the prefix), and a campaign's recount
// (EmailJobStore.campaignJobCounts groups by the other three fields, so this index covers it).
// Shapes: aggregate eq(campaignId); update eq(campaignId,status,type) (CampaignHolds.holdQueued).
EmailJobSchema.index({ campaignId: 1, status: 1, type: 1, messageId: 1 });
// The admin list (GET /admin/email-jobs), newest first with `_id` as the page's tie-breaker: by type (and
// status), by campaign, or unfiltered.
// Shapes: find eq(status,type) sort(createdAt:-1,_id:-1), countDocuments eq(type); find eq(campaignId)
// sort(createdAt:-1,_id:-1); find sort(createdAt:-1,_id:-1).
EmailJobSchema.index({ type: 1, status: 1, createdAt: -1, _id: -1 });
EmailJobSchema.index({ campaignId: 1, createdAt: -1, _id: -1 });
EmailJobSchema.index({ createdAt: -1, _id: -1 });
// The admin list filtered by status alone (the dead or failed jobs of the whole queue), newest first.
EmailJobSchema.index({ status: 1, createdAt: -1, _id: -1 });
// SentMessageLookup.findByProviderId: a provider event that names the provider's id only.
// Shape: find eq(providerMessageId).
EmailJobSchema.index({ providerMessageId: 1 }, { sparse: true });
// RecipientJobsService: every job to one address, oldest first (a person's data export, a GDPR erasure).
// Shapes: find eq(payload.to) sort(createdAt:1); countDocuments eq(payload.to); update eq(payload.to,status).
EmailJobSchema.index({ 'payload.to': 1, createdAt: 1 });
// RecipientJobsService.erasePlans: the inline-recipient plans that name one address (lower-cased when
// enqueued); only plans are in it. Shape: find eq(payload.recipients.to,type) where(type="email.batch.plan").
EmailJobSchema.index(
  { 'payload.recipients.to': 1 },
  { partialFilterExpression: { type: 'email.batch.plan' } },
);
// Retention: a finished job is removed at its `expiresAt` (absent, so never removed, until it ends); the
// server's TTL monitor is its only reader.
EmailJobSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0, sparse: true });
