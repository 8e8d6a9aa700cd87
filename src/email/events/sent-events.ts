import { Injectable } from '@nestjs/common';
import type { FinishedJob } from '../jobs/email-job.store';
import type { EmailJob } from '../jobs/schemas/email-job.schema';
import { type TrackingEvent, TrackingEvents } from '../tracking/tracking-events';
import type { SentMessage } from './sent-message';

/** The recipient fields of an `email.send` job (null for a batch plan, which sends nothing). */
export function sentMessageOf(job: EmailJob): SentMessage | undefined {
  if (job.type !== 'email.send') return undefined;
  const contactId = (job.payload as { contactId?: unknown }).contactId;
  return {
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    contactId: typeof contactId === 'string' ? contactId : null,
  };
}

/**
 * The worker's `sent` events: one per message the SMTP server (or the dev outbox) accepted, so campaign
 * figures exist without a provider. They go to the buffered event writer, never to the database from the
 * worker's slots: a campaign's thousands of messages a second cost one insert (and one counter update per
 * counter collection) per second, not one write per message.
 */
@Injectable()
export class SentEvents {
  constructor(private readonly buffer: TrackingEvents) {}

  /** Outcomes the worker recorded (only those: a reaped job's outcome is not this worker's). */
  record(finished: FinishedJob[]): void {
    const now = new Date();
    const events: TrackingEvent[] = [];
    for (const { outcome, message } of finished) {
      if (outcome.status !== 'completed' || !outcome.messageId || !message) continue;
      const provider = (outcome.result as { provider?: unknown }).provider;
      events.push({
        appId: message.appId,
        contactId: message.contactId,
        campaignId: message.campaignId,
        messageId: outcome.messageId,
        provider: typeof provider === 'string' ? provider : 'smtp',
        type: 'sent',
        userAgent: null,
        automated: false,
        createdAt: now,
      });
    }
    if (events.length > 0) this.buffer.recordMany(events);
  }
}
