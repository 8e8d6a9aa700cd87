import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { CredentialChecks } from '../../common/auth/credential-checks';
import { clientIp } from '../../common/http/client-ip';
import { RetryLaterException } from '../../common/http/retry-later.exception';
import type { AppConfig } from '../../config/env';
import { ForgedSignatureBudget } from './forged-signature-budget';
import {
  type ProviderFormat,
  type VerifiedWebhook,
  WebhookNotConfigured,
  type WebhookRequest,
  WebhookRefused,
} from './providers/provider-format';
import { providerFormat } from './providers/registry';
import { SNS_ENDPOINT_RULE, type SnsEndpointRule } from './providers/sns-endpoints';
import { WebhookToken } from './schemas/webhook-token.schema';

export type { WebhookRequest } from './providers/provider-format';

/**
 * The primary e-mail provider's authentication, in the format EMAIL_PROVIDER names (src/email/events/
 * providers/: Resend's Standard Webhooks, SES through SNS, SendGrid, Postmark, Mailgun). Each checks the
 * request before its body is trusted; a failed check → 401, and without the provider's secret every request
 * is refused (401): an unauthenticated webhook is never trusted.
 *
 * Where the signature covers the raw bytes (Resend, SendGrid) or sits in headers (Postmark), the body is
 * parsed only once the check passes (with every JSON route's limits, 400), so a forged body costs one
 * signature check and no parse. Each failed check counts against the client IP's budget of forged
 * signatures; over it, failures answer 429 with Retry-After. Valid deliveries are never counted.
 */
@Injectable()
export class WebhookSignatureStrategy {
  private readonly format: ProviderFormat;

  constructor(
    config: ConfigService<AppConfig, true>,
    private readonly budget: ForgedSignatureBudget,
    @InjectModel(WebhookToken.name) tokens: Model<WebhookToken>,
    @Inject(SNS_ENDPOINT_RULE) snsEndpoints: SnsEndpointRule,
    checks: CredentialChecks,
  ) {
    checks.register('webhook-signature', (request) => this.verify(request));
    const setting = <K extends keyof AppConfig>(name: K) => config.get(name, { infer: true });
    this.format = providerFormat(
      setting('EMAIL_PROVIDER'),
      {
        WEBHOOK_SECRET: setting('WEBHOOK_SECRET'),
        SES_SNS_TOPIC_ARNS: setting('SES_SNS_TOPIC_ARNS'),
        SENDGRID_WEBHOOK_PUBLIC_KEY: setting('SENDGRID_WEBHOOK_PUBLIC_KEY'),
        POSTMARK_WEBHOOK_USER: setting('POSTMARK_WEBHOOK_USER'),
        POSTMARK_WEBHOOK_PASSWORD: setting('POSTMARK_WEBHOOK_PASSWORD'),
        MAILGUN_WEBHOOK_SIGNING_KEY: setting('MAILGUN_WEBHOOK_SIGNING_KEY'),
      },
      { tokens, snsEndpoints },
    );
  }

  async verify(request: WebhookRequest): Promise<VerifiedWebhook> {
    try {
      return await this.format.receive(request, new Date());
    } catch (error) {
      if (error instanceof WebhookNotConfigured) throw new UnauthorizedException(error.message);
      if (error instanceof WebhookRefused) return this.refuse(request, error.message);
      throw error;
    }
  }

  /** 401, or 429 once the client has used its budget of failed checks. */
  private async refuse(request: WebhookRequest, reason: string): Promise<never> {
    const retryAfter = await this.budget.charge(clientIp(request));
    if (retryAfter !== null) {
      throw new RetryLaterException(
        'Too many requests with an invalid webhook signature from this address; retry later',
        retryAfter,
      );
    }
    throw new UnauthorizedException(reason);
  }
}
