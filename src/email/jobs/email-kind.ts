import type { ObjectId } from 'mongodb';
import { defineKind, type DueJob as QueueDueJob, type OutcomeOf } from '../../queue/queue-kind';
import type { SendableTemplate } from '../delivery/template-source';
import type { SentMessage } from '../events/sent-message';
import type { SuppressionCauses } from '../suppression/schemas/suppression.schema';
import type { BatchPlan } from './batch-plan';
import type { EmailMessage } from './email-message';
import type { LedgerMessage } from './message-ledger';
import {
  DEFAULT_MAX_ATTEMPTS,
  EMAIL_JOB_TYPES,
  EMAIL_KIND_STATUSES,
  EMAIL_STREAMS,
  EmailJob,
  type EmailJobType,
  EmailJobSchema,
} from './schemas/email-job.schema';
import { isPermanentSendError } from './send-failures';
import { EMAIL_WORKER_OPTIONS } from './worker-options';

/** Templates looked up during one scan of the queue: a campaign's thousand messages cost one lookup. */
export type TemplateMemo = Map<string, Promise<SendableTemplate | null>>;

/**
 * What the jobs of one scan share: the suppression causes of their addresses (each job's stream decides
 * which stop it), the templates read.
 */
export interface EmailScan {
  suppressed: Map<string, SuppressionCauses>;
  memo: TemplateMemo;
}

/** A due job as the worker's scan sees it: enough to check suppression before claiming. */
export interface DueJob extends QueueDueJob {
  type: EmailJobType;
  to?: string;
}

/** A job that ended well: sent (with its Message-ID), planned, or skipped. */
export interface Completed {
  status: 'completed';
  result: Record<string, unknown>;
  messageId?: string;
  providerMessageId?: string;
}

/** What the worker records with an outcome, for the ledger, the `sent` events and the campaigns. */
export interface EmailRecord {
  /** The job's campaign (a campaign's messages and its plan), recounted once outcomes are recorded. */
  campaignId?: string | null;
  /** Who an `email.send` job's message is for: its `sent` event names them (SentEvents). */
  message?: SentMessage;
  /** An `email.send` job's ledger fields: a recorded send completes (or creates) its entry. */
  ledger?: LedgerMessage;
  /** The job had an attempt whose outcome was unknown before this one (its `unknownOutcomes`). */
  resentAfterUnknown?: boolean;
}

/** The e-mail kind's types: each job type's payload, the job, its success, its scan and record. */
export interface EmailKindTypes {
  payloads: { 'email.send': EmailMessage; 'email.batch.plan': BatchPlan };
  job: EmailJob;
  outcome: Completed;
  scan: EmailScan;
  due: DueJob;
  record: EmailRecord;
}

/** What a handler answers: completed, or a failed attempt. */
export type JobOutcome = OutcomeOf<EmailKindTypes>;

export const LAPSED_DELIVERY_ERROR =
  'The worker stopped during delivery, so whether the message left is unknown; not retried, to avoid a duplicate';
const LAPSED_PLAN_ERROR = 'The worker stopped while planning; planned again';
const LAPSED_UNSENT_ERROR = 'Every attempt ended with its worker stopping before the message was sent';
export const LAPSED_REPEATABLE_ERROR =
  'The worker stopped during delivery; sent again with the same idempotency key, which the provider sends once';
const LAPSED_LAST_REPEATABLE_ERROR =
  'The worker stopped during the last attempt of the delivery, so whether the message left is unknown';

const DAY_MS = 86_400_000;

/**
 * The `email_jobs` kind. A lapsed `email.send` that was handed to the transport may have left before its
 * worker died: handed to a transport without idempotency (SMTP) it ends `dead` ("outcome unknown") rather
 * than risk a duplicate; handed to one that drops a repeat of its key (the mark says handed `repeatable`) it
 * is due again at once, the same key making the provider answer without sending twice. One never handed is
 * safe to send: back to `pending`. Either way, dead once its attempts are used up, so a message that kills
 * its workers does not loop. A batch plan only enqueues with idempotency keys, so it is safe to run again
 * and is due at once.
 */
export const EMAIL_KIND = defineKind<EmailKindTypes>({
  name: 'email',
  model: { name: EmailJob.name, schema: EmailJobSchema, lease: { holdScope: 'campaignId' } },
  jobTypes: EMAIL_JOB_TYPES,
  dueField: 'scheduledAt',
  order: { priority: -1, scheduledAt: 1 },
  // A stream is a lane: its own scan, slots and rate budget, so a campaign never queues a sign-in link.
  lanes: { field: 'stream', names: EMAIL_STREAMS },
  statuses: EMAIL_KIND_STATUSES,
  retry: { maxAttempts: (job) => job.maxAttempts, isPermanent: isPermanentSendError },
  due: {
    projection: { type: 1, priority: 1, 'payload.to': 1 },
    of: (doc) => ({
      _id: doc._id as ObjectId,
      type: doc.type as EmailJobType,
      priority: doc.priority as number,
      to: (doc.payload as { to?: string } | undefined)?.to,
    }),
  },
  claimFields: (now) => ({ startedAt: now }),
  doneFields: (outcome) => ({
    result: outcome.result,
    ...(outcome.messageId ? { messageId: outcome.messageId } : {}),
    ...(outcome.providerMessageId ? { providerMessageId: outcome.providerMessageId } : {}),
  }),
  // The TTL index removes an ended job at `expiresAt` (EMAIL_JOB_RETENTION_DAYS, read at start).
  endFields: (now, settings) => ({
    completedAt: now,
    expiresAt: new Date(now.getTime() + settings.retentionDays * DAY_MS),
  }),
  heldProjection: { type: 1, campaignId: 1, maxAttempts: 1 },
  lapse: (job, settings) => {
    if (job.type === 'email.batch.plan') return { to: 'due', error: LAPSED_PLAN_ERROR };
    if (job.handed === 'yes') return { to: 'dead', error: LAPSED_DELIVERY_ERROR };
    if (job.attempts >= ((job.maxAttempts as number | undefined) ?? settings.maxAttempts)) {
      return {
        to: 'dead',
        error: job.handed === 'repeatable' ? LAPSED_LAST_REPEATABLE_ERROR : LAPSED_UNSENT_ERROR,
      };
    }
    if (job.handed === 'repeatable') return { to: 'due', error: LAPSED_REPEATABLE_ERROR };
    return { to: 'pending', uncount: false };
  },
  settings: {
    env: {
      enabled: 'EMAIL_WORKER_ENABLED',
      intervalMs: 'EMAIL_WORKER_INTERVAL_MS',
      concurrency: 'EMAIL_WORKER_CONCURRENCY',
      ratePerSecond: 'EMAIL_WORKER_RATE_PER_SECOND',
      leaseMs: 'EMAIL_WORKER_LEASE_MS',
      retentionDays: 'EMAIL_JOB_RETENTION_DAYS',
      lanes: {
        transactional: {
          concurrency: 'EMAIL_TRANSACTIONAL_CONCURRENCY',
          ratePerSecond: 'EMAIL_TRANSACTIONAL_RATE_PER_SECOND',
        },
        broadcast: {
          concurrency: 'EMAIL_BROADCAST_CONCURRENCY',
          ratePerSecond: 'EMAIL_BROADCAST_RATE_PER_SECOND',
        },
      },
    },
    defaults: {
      scanSize: 500,
      rescanAfterMs: 2_000,
      finishBatchSize: 50,
      reapEveryMs: 5_000,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      backoff: { baseMs: 30_000, maxMs: 3_600_000 },
    },
    token: EMAIL_WORKER_OPTIONS,
  },
});
