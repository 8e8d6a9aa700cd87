/** Events the e-mail engine emits for other modules (EventEmitter2). */
export const EmailEvents = {
  /** Some `email.send` jobs of one campaign reached a final state (one event per campaign per outcome batch). */
  CampaignMessagesFinished: 'email.campaign.messagesFinished',
  /** The complaint guard held a campaign's remaining messages; its owner shows why (`CampaignHeldEvent`). */
  CampaignHeld: 'email.campaign.held',
} as const;

/**
 * Final outcomes of a campaign's messages, counted once each: `sent` were handed to the provider; `failed`
 * ended without delivery (dead after retries or a permanent error, or skipped because the address is
 * suppressed). A retry (`failed` job status with a later attempt) is not final and is not counted.
 */
export interface CampaignMessagesFinishedEvent {
  campaignId: string;
  sent: number;
  failed: number;
}

/** The complaint guard held a campaign's remaining messages (EmailEvents.CampaignHeld). */
export interface CampaignHeldEvent {
  campaignId: string;
  appId: string | null;
  /** Why, in words an admin reads on the campaign. */
  reason: string;
  heldAt: Date;
}
