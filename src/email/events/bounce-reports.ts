import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { EmailEvents, type SmtpBounceEvent } from '../email.events';
import { SentMessageLookup } from '../jobs/sent-message-lookup';
import type { BounceType } from '../tracking/schemas/email-event.schema';
import { ProviderEventBatch, type WebhookOutcome } from './provider-event-batch';

/** A bounce or complaint about one of our messages, named by its job, from outside a provider webhook. */
export interface BounceReport {
  jobId: string;
  type: 'bounced' | 'complained';
  bounceType?: BounceType;
  /**
   * What makes a repeat of this report the same report (an SMTP refusal of a job, the same DSN delivered
   * twice): it is stored as the event's delivery key, so the event and its effects happen once.
   */
  key: string;
  occurredAt: Date;
  /** The recipient the report names, used only when the message's record no longer names the address. */
  to?: string | null;
}

/**
 * Bounces and complaints that no provider webhook brings: the SMTP server's refusal of a recipient and the
 * DSN and ARF reports the inbound listener receives (src/email/bounces/). Each goes through the provider
 * webhooks' own path (ProviderEventBatch), so it is the same event, with the same effects (suppression, the
 * subscription, chat, the complaint guard), recognised as a repeat by its key.
 */
@Injectable()
export class BounceReports {
  private readonly logger = new Logger(BounceReports.name);

  constructor(
    private readonly messages: SentMessageLookup,
    private readonly batch: ProviderEventBatch,
  ) {}

  /** Null when the job names no message the service knows (expired, or never ours). */
  async report(report: BounceReport): Promise<WebhookOutcome | null> {
    const message = await this.messages.byJobId(report.jobId);
    if (!message) return null;
    return this.batch.ingest({
      webhookId: report.key,
      receivedAt: new Date(),
      event: {
        type: report.type,
        messageId: message.messageId,
        occurredAt: report.occurredAt,
        ...(report.type === 'bounced' ? { bounceType: report.bounceType ?? 'hard' } : {}),
        to: report.to ?? null,
        userAgent: null,
        automated: false,
      },
    });
  }

  /** The worker awaits this (emitAsync): the address is suppressed before the job's outcome is recorded. */
  @OnEvent(EmailEvents.SmtpBounce)
  async onSmtpBounce(event: SmtpBounceEvent): Promise<void> {
    const outcome = await this.report({
      jobId: event.jobId,
      type: 'bounced',
      bounceType: event.bounceType,
      key: `smtp:${event.jobId}:${event.bounceType}`,
      occurredAt: new Date(),
    });
    if (!outcome) this.logger.warn(`SMTP ${event.bounceType} bounce of job ${event.jobId}: no such message`);
  }
}
