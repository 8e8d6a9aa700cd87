/** Events the e-mail engine emits for other modules (EventEmitter2). */
export const EmailEvents = {
  /** Jobs of these campaigns changed state (one event per outcome batch and per reaping). */
  CampaignJobsFinished: 'email.campaign.jobsFinished',
  /** The complaint guard held a campaign's remaining messages; its owner shows why (`CampaignHeldEvent`). */
  CampaignHeld: 'email.campaign.held',
  /** The SMTP server refused a message's recipient: a bounce, reported as a provider's would be. */
  SmtpBounce: 'email.smtp.bounced',
} as const;

/**
 * A recipient refused in the SMTP conversation (EmailEvents.SmtpBounce): a 5xx to RCPT is a hard bounce, a
 * 4xx on the job's last attempt a soft one. The listener (src/email/events/bounce-reports.ts) records the
 * same event and effects as a provider webhook's bounce.
 */
export interface SmtpBounceEvent {
  jobId: string;
  bounceType: 'hard' | 'soft';
  /** The server's answer, bounded (logged, never stored with the address). */
  response: string;
}

/**
 * A hint, not a record: the listener recounts the campaigns from the queue
 * (`EmailService.campaignJobCounts`). It may be lost (a process killed after recording outcomes, a listener
 * failure), so the campaign's owner must not depend on receiving it; it only makes the campaign's figures
 * current sooner.
 */
export interface CampaignJobsFinishedEvent {
  campaignIds: string[];
  /**
   * Sent when a worker's run ends (it found nothing more due) for the campaigns it touched in the run: the
   * moment a campaign may have just finished, so a recount should not wait for its spacing.
   */
  drained?: boolean;
}

/** The complaint guard held a campaign's remaining messages (EmailEvents.CampaignHeld). */
export interface CampaignHeldEvent {
  campaignId: string;
  appId: string | null;
  /** Why, in words an admin reads on the campaign. */
  reason: string;
  heldAt: Date;
}
