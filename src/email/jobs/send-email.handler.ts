import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { EmailEvents, type SmtpBounceEvent } from '../email.events';
import type { AppConfig } from '../../config/env';
import { broadcastHeaders, messageIdOf, unsubscribeHeaders } from '../delivery/message-headers';
import { providerHeaders, providerMessageIdOf } from '../delivery/provider-message-id';
import { MAIL_TRANSPORT } from '../delivery/mail-transport.provider';
import type { DeliveryReceipt, MailTransport, OutgoingMail } from '../delivery/mail-transport';
import {
  EMAIL_TEMPLATE_SOURCE,
  type EmailTemplateSource,
  type RenderedContent,
  type SendableTemplate,
} from '../delivery/template-source';
import { DependencyUnavailableError } from '../../queue/circuit';
import { SendingIdentities } from '../../sender-domains/sending-identities';
import { PermanentJobError } from '../../queue/retry-policy';
import { VerpAddresses } from '../bounces/verp';
import { blockingCause } from '../suppression/suppression-policy';
import { SuppressionService } from '../suppression/suppression.service';
import { TemplateProblem } from '../templates/template-limits';
import { JobHandler } from '../../queue/job-handler.decorator';
import { JobHandlers } from '../../queue/job-handlers';
import type { JobOf } from '../../queue/queue-kind';
import {
  COMPOSERS,
  type ComposedContent,
  type EmailJobContext,
  type MessageComposerFn,
} from './email-handlers';
import { EMAIL_KIND, type EmailKindTypes, type JobOutcome, type TemplateMemo } from './email-kind';
import type { EmailMessage } from './email-message';
import { streamOf } from './schemas/email-job.schema';
import { smtpBounceOf } from './send-failures';

/**
 * Delivers one `email.send` job: suppression, content (literal, a rendered template or composed), headers,
 * transport.
 */
@Injectable()
export class SendEmailHandler {
  /** Whose webhooks report on the mail (EMAIL_PROVIDER): some need a header to name our Message-ID. */
  private readonly provider: string;

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    @Inject(MAIL_TRANSPORT) private readonly transport: MailTransport,
    @Inject(EMAIL_TEMPLATE_SOURCE) private readonly templates: EmailTemplateSource,
    private readonly handlers: JobHandlers,
    private readonly identities: SendingIdentities,
    private readonly events: EventEmitter2,
    private readonly verp: VerpAddresses,
    private readonly suppression: SuppressionService,
  ) {
    this.provider = config.get('EMAIL_PROVIDER', { infer: true });
  }

  /**
   * Sends one job's message. A suppressed address (checked for the whole scan before the claim) completes
   * without sending. The job is marked handed right before the transport gets the message: a worker that
   * dies before that point leaves a job that is safe to send again, and one that dies after it leaves a job
   * that is safe to send again only through an idempotent transport (the mark says which). The message's
   * idempotency key is the job's id: the same for every attempt, bounded in length, free of the caller's
   * key text (which may name a person and is rewritten by an erasure). A send that never reached the
   * provider, or that it refused wholesale, is an outage (`DependencyUnavailableError`): the engine puts the
   * job back, attempt not counted.
   */
  @JobHandler(EMAIL_KIND, 'email.send')
  async send(job: JobOf<EmailKindTypes, 'email.send'>, context: EmailJobContext): Promise<JobOutcome> {
    const message = job.payload;
    const stream = streamOf(job);
    const causes = context.scan.suppressed.get(message.to?.toLowerCase() ?? '');
    const suppressedBecause = causes ? blockingCause(causes, stream) : null;
    if (suppressedBecause) {
      return { status: 'completed', result: { skipped: 'suppressed', reason: suppressedBecause, stream } };
    }
    const { content, sender } = await this.content(message, context.scan.memo);
    // Who it is from, and the domain its Message-ID, envelope and signature name (sending-identities.ts).
    const identity = await this.identities.resolve(message.appId, {
      from: message.from,
      replyTo: message.replyTo,
      templateSender: sender ?? undefined,
    });
    const messageId = messageIdOf(String(job._id), identity.domain);
    await context.handed({ repeatable: this.transport.idempotent });
    const receipt = await this.sendOrReportBounce(job, {
      messageId,
      idempotencyKey: `email-job/${String(job._id)}`,
      from: identity.from,
      to: message.to,
      stream,
      replyTo: identity.replyTo,
      envelopeFrom: this.verp.envelopeFor(String(job._id), identity.envelopeFrom),
      dkim: identity.dkim,
      subject: content.subject,
      html: content.html || undefined,
      text: content.text || undefined,
      headers: { ...unsubscribeHeaders(message.unsubscribeUrl), ...this.broadcast(message, identity.domain) },
      preparedHeaders: providerHeaders(this.provider, messageId),
    });
    // Accepted: a soft-bounce suppression ends (docs/operations/email-delivery.md "Soft bounces").
    if (causes?.soft_bounce) await this.suppression.liftSoftBounce(message.to);
    // An API transport answers with the id itself; an SMTP provider names it in its reply (SES, SendGrid).
    const providerMessageId = receipt.providerMessageId ?? providerMessageIdOf(receipt.response);
    return {
      status: 'completed',
      messageId,
      ...(providerMessageId ? { providerMessageId } : {}),
      result: {
        messageId,
        provider: this.transport.provider,
        accepted: receipt.accepted,
        response: receipt.response,
        ...(providerMessageId ? { providerMessageId } : {}),
      },
    };
  }

  /**
   * A recipient the SMTP server refuses is a bounce, reported like a provider's (docs/operations/
   * email-delivery.md "Bounces"): a 5xx to RCPT at once (hard), a 4xx when this was the last attempt (soft).
   * The report is awaited, so the address is suppressed before the job's outcome is recorded; the error then
   * takes its usual course (the job is dead, or retried).
   */
  private async sendOrReportBounce(
    job: JobOf<EmailKindTypes, 'email.send'>,
    mail: OutgoingMail,
  ): Promise<DeliveryReceipt> {
    try {
      return await this.sendOrReportOutage(mail);
    } catch (error) {
      const bounceType = smtpBounceOf(error, job.attempts >= job.maxAttempts);
      if (bounceType) {
        await this.events.emitAsync(EmailEvents.SmtpBounce, {
          jobId: String(job._id),
          bounceType,
          response: String((error as Error).message).slice(0, 300),
        } satisfies SmtpBounceEvent);
      }
      throw error;
    }
  }

  /** A campaign's messages and its test copies carry the broadcast headers; other mail none. */
  private broadcast(message: EmailMessage, senderDomain: string): Record<string, string> {
    const campaignId = message.campaignId ?? message.broadcastOf;
    if (!campaignId || !message.appId) return {};
    return broadcastHeaders({ campaignId, appId: message.appId, senderDomain });
  }

  private async sendOrReportOutage(mail: OutgoingMail): Promise<DeliveryReceipt> {
    try {
      return await this.transport.send(mail);
    } catch (error) {
      if (this.transport.unreachable?.(error)) {
        throw new DependencyUnavailableError(this.transport.dependency, error);
      }
      throw error;
    }
  }

  private async content(
    message: EmailMessage,
    memo: TemplateMemo,
  ): Promise<{ content: RenderedContent; sender?: SendableTemplate['sender'] }> {
    if (message.composer !== undefined) {
      const { sender, ...content } = await this.composed(message);
      return { content, sender };
    }
    if (!message.template) {
      return {
        content: { subject: message.subject ?? '', html: message.html ?? '', text: message.text ?? '' },
      };
    }
    const appId = message.appId ?? null;
    const language = message.template.language ?? 'en';
    const key = `${appId}\u0000${message.template.name}\u0000${language}`;
    let lookup = memo.get(key);
    if (!lookup) {
      lookup = this.templates.resolveForSending(appId, message.template.name, language);
      memo.set(key, lookup);
    }
    const template = await lookup;
    if (!template) {
      throw new PermanentJobError(
        `No active template "${message.template.name}" (${language}) for app ${appId ?? '(global)'}`,
      );
    }
    try {
      return {
        content: await this.templates.render(template, message.variables ?? {}),
        sender: template.sender,
      };
    } catch (error) {
      throw new PermanentJobError(
        `Template "${message.template.name}" failed to render: ${(error as Error).message}`,
      );
    }
  }

  private async composed(message: EmailMessage): Promise<ComposedContent> {
    const composer = message.composer
      ? this.handlers.get<MessageComposerFn>(COMPOSERS, message.composer)
      : undefined;
    if (!composer) throw new PermanentJobError(`No message composer "${message.composer}"`);
    let content: ComposedContent | null;
    try {
      content = await composer(message);
    } catch (error) {
      // A template that does not render (over its budget, a run-time error) will not render next time either.
      if (error instanceof TemplateProblem)
        throw new PermanentJobError(`The message failed to render: ${error.message}`);
      throw error;
    }
    if (!content) {
      throw new PermanentJobError(`The "${message.composer}" composer cannot compose this message`);
    }
    return content;
  }
}
