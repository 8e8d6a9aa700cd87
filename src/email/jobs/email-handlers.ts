import { JobHandler } from '../../queue/job-handler.decorator';
import type { JobContext } from '../../queue/polling-worker';
import type { RenderedContent, SendableTemplate } from '../delivery/template-source';
import type { BatchPlan } from './batch-plan';
import type { EmailScan } from './email-kind';
import type { EmailMessage } from './email-message';

/**
 * The e-mail queue's handlers, found at boot by their decorators (src/queue/job-handlers.ts): the job types
 * (`@JobHandler(EMAIL_KIND, 'email.send')`, `@JobHandler(EMAIL_KIND, 'email.batch.plan')`), and the lookups
 * those make by name: batch planners by plan kind, message composers by composer name, and the campaigns'
 * link tables. A module with its own audiences or content (newsletters) marks a method of its provider;
 * the e-mail module never imports it.
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

export type EmailJobContext = JobContext<EmailScan>;
