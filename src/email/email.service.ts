import { BadRequestException, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CampaignCountersRebuild } from './events/campaign-counters-rebuild';
import type { BatchPlan } from './jobs/batch-plan';
import { CampaignHolds } from './jobs/campaign-holds';
import { assertSendable, type EmailMessage, type EnqueueOptions } from './jobs/email-message';
import { assertRecipientsPlan, type RecipientsPlan } from './jobs/recipients-plan';
import { EmailJobStore, type CampaignJobCounts, type EnqueuedJob, type NewJob } from './jobs/email-job.store';
import { DEFAULT_MAX_ATTEMPTS, defaultStream } from './jobs/schemas/email-job.schema';

/** `result.skipped` of a recipient a plan did not queue because the address breaks the address rule. */
export const INVALID_ADDRESS_SKIP = 'invalid_address';

/** Enqueuing more than this in one call is refused: large sends go through a batch plan. */
export const MAX_ENQUEUE_BATCH = 5_000;

/**
 * The e-mail engine's API for the rest of the service (docs/architecture.md "Modules and boundaries": modules
 * enqueue, they never write jobs). Every message gets an idempotency key; enqueuing a known key returns the
 * existing job.
 */
@Injectable()
export class EmailService {
  constructor(
    private readonly store: EmailJobStore,
    private readonly holds: CampaignHolds,
    private readonly analytics: CampaignCountersRebuild,
  ) {}

  async enqueueEmail(message: EmailMessage, options: EnqueueOptions = {}): Promise<EnqueuedJob> {
    const [job] = await this.enqueueEmails([{ message, options }]);
    return job;
  }

  /** Many messages in one insert (a campaign's page of recipients, say); ids come back in input order. */
  async enqueueEmails(items: { message: EmailMessage; options?: EnqueueOptions }[]): Promise<EnqueuedJob[]> {
    if (items.length > MAX_ENQUEUE_BATCH) {
      throw new BadRequestException(`At most ${MAX_ENQUEUE_BATCH} messages per call; use a batch plan`);
    }
    for (const { message, options } of items) assertSendable(message, options);
    const jobs = await this.store.insert(
      items.map(({ message, options = {} }) =>
        newJob(
          'email.send',
          // Lower-cased like contacts and suppression: one spelling per address, found by one index lookup.
          { ...message, to: message.to.trim().toLowerCase() },
          options,
          message.appId,
          message.campaignId,
        ),
      ),
    );
    // A campaign held by the complaint guard while its plan still runs: what the plan adds is held too.
    await this.holds.holdIfHeld(
      items.flatMap(({ message }) => (message.campaignId ? [message.campaignId] : [])),
    );
    return jobs;
  }

  /**
   * Records recipients a plan skips because their address breaks the address rule (people stored before
   * it): each becomes an `email.send` job that is born `completed` with `result.skipped: invalid_address`
   * and never runs, under the key its message would have had. So the skip shows in the job list and in
   * its campaign's `failed` figure, a plan run again records it once, and a GDPR erasure finds it by address.
   * The job keeps who and what for (address, app, campaign, person), no content.
   */
  async recordSkipped(items: { message: EmailMessage; idempotencyKey: string }[]): Promise<EnqueuedJob[]> {
    if (items.length === 0) return [];
    return this.store.insert(
      items.map(({ message, idempotencyKey }) => ({
        ...newJob(
          'email.send',
          {
            to: message.to.trim().toLowerCase(),
            ...(message.appId ? { appId: message.appId } : {}),
            ...(message.campaignId ? { campaignId: message.campaignId } : {}),
            ...(message.contactId ? { contactId: message.contactId } : {}),
          },
          { idempotencyKey },
          message.appId,
          message.campaignId,
        ),
        skipped: { skipped: INVALID_ADDRESS_SKIP },
      })),
    );
  }

  /**
   * Releases a campaign held by the complaint guard: its held messages are due again, and the guard does
   * not hold it a second time. Returns how many messages were released.
   */
  releaseCampaign(campaignId: string): Promise<number> {
    return this.holds.release(campaignId);
  }

  /**
   * Once a campaign has finished: its analytics counters are rebuilt from its events when their `sent`
   * total differs from the `sent` events stored (a count interrupted by a kill or an outage). Returns
   * whether they were rebuilt.
   */
  reconcileCampaignAnalytics(campaignId: string): Promise<boolean> {
    return this.analytics.reconcileSent(campaignId);
  }

  /** A campaign's messages counted from the queue by final state, and whether its plan has finished. */
  campaignJobCounts(campaignId: string): Promise<CampaignJobCounts> {
    return this.store.campaignJobCounts(campaignId);
  }

  async enqueueBatchPlan(plan: BatchPlan, options: EnqueueOptions = {}): Promise<EnqueuedJob> {
    if (typeof plan.kind !== 'string' || plan.kind.length === 0)
      throw new BadRequestException('kind is required');
    if (plan.kind === 'recipients') assertRecipientsPlan(plan as RecipientsPlan);
    const stored = plan.kind === 'recipients' ? withNormalisedRecipients(plan as RecipientsPlan) : plan;
    const [job] = await this.store.insert([
      newJob('email.batch.plan', stored, options, plan.appId, plan.campaignId),
    ]);
    return job;
  }
}

/** Recipients lower-cased like every queued address: a GDPR erasure finds them by one index lookup. */
function withNormalisedRecipients(plan: RecipientsPlan): RecipientsPlan {
  return {
    ...plan,
    recipients: plan.recipients.map((recipient) => ({ ...recipient, to: recipient.to.trim().toLowerCase() })),
  };
}

function newJob(
  type: NewJob['type'],
  payload: object,
  options: EnqueueOptions,
  appId: string | null | undefined,
  campaignId: string | undefined,
): NewJob {
  return {
    type,
    payload: payload as Record<string, unknown>,
    idempotencyKey: options.idempotencyKey ?? randomUUID(),
    // A random key is new by construction.
    ...(options.idempotencyKey === undefined || options.keyIsNew ? { keyIsNew: true } : {}),
    priority: options.priority ?? 0,
    stream: options.stream ?? defaultStream(type, campaignId),
    scheduledAt: options.scheduledAt ?? new Date(),
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    appId: appId ?? null,
    campaignId: campaignId ?? null,
  };
}
