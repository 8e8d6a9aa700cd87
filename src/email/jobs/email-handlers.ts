import { JobHandler } from '../../queue/job-handler.decorator';
import type { JobContext } from '../../queue/polling-worker';
import type { RenderedContent, SendableTemplate } from '../delivery/template-source';
import type { SuppressionReason } from '../suppression/schemas/suppression.schema';
import type { BatchPlan } from './batch-plan';
import type { EmailMessage } from './email-message';
import type { JobOutcome } from './email-job.store';
import type { EmailJob } from './schemas/email-job.schema';

/**
 * The e-mail queue's handlers, found at boot by their decorators (src/queue/job-handlers.ts): the job types
 * (`@JobHandler('email.send')`, `@JobHandler('email.batch.plan')`), and the lookups those make by name:
 * batch planners by plan kind, message composers by composer name, and the campaigns' link tables.
 * A module with its own audiences or content (newsletters) marks a method of its provider; the e-mail
 * module never imports it.
 */
export const PLANNERS = 'email.planner';
export const COMPOSERS = 'email.composer';
export const CLICK_TARGETS = 'email.click-targets';

/** Marks the planner of a batch plan kind: `(plan: BatchPlan, planJobId: string) => Promise<PlanOutcome>`. */
export const PlanHandler = (kind: string) => JobHandler(kind, PLANNERS);
/**
 * Marks the composer of messages naming `name`: `(message: EmailMessage) => Promise<ComposedContent | null>`.
 */
export const ComposerHandler = (name: string) => JobHandler(name, COMPOSERS);
/**
 * Marks the source of campaigns' link tables: `(campaignId: string) => Promise<readonly string[] | null>`.
 */
export const ClickTargetSource = () => JobHandler('campaign', CLICK_TARGETS);

export interface PlanOutcome {
  enqueued: number;
  alreadyQueued: number;
  /** Recipients recorded as skipped (`EmailService.recordSkipped`) by this run; absent when none. */
  skipped?: number;
}

/**
 * Expands one batch plan into `email.send` jobs. It must be safe to run again after a crash: derive every
 * message's idempotency key from `planJobId`, so a second run enqueues only what the first did not.
 */
export type BatchPlanner = (plan: BatchPlan, planJobId: string) => Promise<PlanOutcome>;

/** What a composer renders; `sender` (a stored template's) replaces `MAIL_FROM` when there is no `from`. */
export interface ComposedContent extends RenderedContent {
  sender?: SendableTemplate['sender'];
}

/**
 * Renders a message naming its composer when it is sent. Null means the message can never be composed
 * (say, its campaign does not exist): the job is dead at once. A thrown error is a failed attempt. A
 * module whose messages share most of their content (a campaign) queues only what differs per person; a
 * message that carries a secret (a sign-in link) is composed at send time too, so its body is never stored.
 */
export type MessageComposerFn = (message: EmailMessage) => Promise<ComposedContent | null>;

/** Reads the link table of a campaign (its URLs in order), or null for an unknown campaign. */
/** `draft`: a test copy's click, which follows the draft's links as they are now. */
export type LinkTableSource = (
  campaignId: string,
  options?: { draft?: boolean },
) => Promise<readonly string[] | null>;

/** Templates looked up during one scan of the queue: a campaign's thousand messages cost one lookup. */
export type TemplateMemo = Map<string, Promise<SendableTemplate | null>>;

/** What the jobs of one scan share: the suppression answers for their addresses, the templates read. */
export interface EmailScan {
  suppressed: Map<string, SuppressionReason>;
  memo: TemplateMemo;
}

export type EmailJobContext = JobContext<EmailScan>;
export type EmailJobHandler = (job: EmailJob, context: EmailJobContext) => Promise<JobOutcome>;
