import type { Model } from 'mongoose';
import type { AppConfig } from '../../../config/env';
import type { EmailProviderName } from '../email-events.config';
import type { WebhookToken } from '../schemas/webhook-token.schema';
import { MailgunFormat } from './mailgun';
import { PostmarkFormat } from './postmark';
import type { ProviderFormat } from './provider-format';
import { ResendFormat } from './resend';
import { SendGridFormat } from './sendgrid';
import { SesFormat } from './ses';
import { SnsCertificates, type SnsEndpointRule } from './sns-endpoints';

/** What a format may need besides its settings. */
export interface ProviderFormatNeeds {
  /** Mailgun's accepted tokens. */
  tokens: Model<WebhookToken>;
  /** Where SNS certificates and subscription links may be fetched from. */
  snsEndpoints: SnsEndpointRule;
}

type Settings = Pick<
  AppConfig,
  | 'WEBHOOK_SECRET'
  | 'SES_SNS_TOPIC_ARNS'
  | 'SENDGRID_WEBHOOK_PUBLIC_KEY'
  | 'POSTMARK_WEBHOOK_USER'
  | 'POSTMARK_WEBHOOK_PASSWORD'
  | 'MAILGUN_WEBHOOK_SIGNING_KEY'
>;

/** Every provider `POST /email-events/primary-provider` can read, by its EMAIL_PROVIDER name. */
const FORMATS: Record<EmailProviderName, (settings: Settings, needs: ProviderFormatNeeds) => ProviderFormat> =
  {
    resend: (settings) => new ResendFormat(settings.WEBHOOK_SECRET),
    ses: (settings, needs) =>
      new SesFormat(settings.SES_SNS_TOPIC_ARNS, needs.snsEndpoints, new SnsCertificates(needs.snsEndpoints)),
    sendgrid: (settings) => new SendGridFormat(settings.SENDGRID_WEBHOOK_PUBLIC_KEY),
    postmark: (settings) =>
      new PostmarkFormat(settings.POSTMARK_WEBHOOK_USER, settings.POSTMARK_WEBHOOK_PASSWORD),
    mailgun: (settings, needs) => new MailgunFormat(settings.MAILGUN_WEBHOOK_SIGNING_KEY, needs.tokens),
  };

/** The configured provider's format (EMAIL_PROVIDER, validated at start-up). */
export function providerFormat(
  name: EmailProviderName,
  settings: Settings,
  needs: ProviderFormatNeeds,
): ProviderFormat {
  return FORMATS[name](settings, needs);
}
