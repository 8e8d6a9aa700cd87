import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
} from 'class-validator';
import { createPublicKey } from 'node:crypto';
import { emptyToUndefined, type EnvSection, toInt } from '../../config/env-rules';

/** Whose signed webhooks `POST /email-events/primary-provider` reads (docs/api/providers/README.md). */
export const EMAIL_PROVIDERS = ['resend', 'ses', 'sendgrid', 'postmark', 'mailgun'] as const;
export type EmailProviderName = (typeof EMAIL_PROVIDERS)[number];
/** An SNS topic's ARN, e.g. arn:aws:sns:eu-west-1:123456789012:ses-events. */
const SNS_TOPIC_ARN = /^arn:aws(-[a-z]+)*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

function isEcPublicKey(base64: string): boolean {
  try {
    return (
      createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' })
        .asymmetricKeyType === 'ec'
    );
  } catch {
    return false;
  }
}

/**
 * The provider whose webhooks report deliveries, bounces and complaints, its secrets, and how long events
 * stay.
 */
export class EmailEventsEnv {
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^whsec_[A-Za-z0-9+/=]+$/, { message: 'must be a whsec_ secret' })
  WEBHOOK_SECRET?: string;

  @IsIn(EMAIL_PROVIDERS, {
    message: `must be one of ${EMAIL_PROVIDERS.join(', ')} (whose webhooks POST /email-events/primary-provider reads)`,
  })
  EMAIL_PROVIDER: EmailProviderName = 'resend';

  /** Amazon SES through SNS: the topics whose notifications are accepted, comma-separated. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @ValidateBy({
    name: 'isSnsTopicArnList',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && value.split(',').every((arn) => SNS_TOPIC_ARN.test(arn.trim())),
      defaultMessage: () =>
        'must be SNS topic ARNs separated by commas, e.g. arn:aws:sns:eu-west-1:123456789012:ses-events',
    },
  })
  SES_SNS_TOPIC_ARNS?: string;

  /**
   * Tests and benchmarks only (refused when NODE_ENV=production): the `host:port` of a local HTTPS server
   * that stands in for SNS, and the PEM file of its self-signed certificate.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[a-z0-9.-]+:\d{1,5}$/, { message: 'must be host:port, e.g. 127.0.0.1:8443' })
  SNS_TEST_ENDPOINT?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  SNS_TEST_CA_FILE?: string;

  /** SendGrid's Signed Event Webhook verification key (base64 of the P-256 public key's DER). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @ValidateBy({
    name: 'isEcPublicKey',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && isEcPublicKey(value),
      defaultMessage: () =>
        "must be the base64 verification key from SendGrid's Signed Event Webhook settings (an ECDSA public key)",
    },
  })
  SENDGRID_WEBHOOK_PUBLIC_KEY?: string;

  /** The basic-auth user and password written into Postmark's webhook URL. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  POSTMARK_WEBHOOK_USER?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'must be at least 16 characters (a random password for the webhook URL)' })
  @MaxLength(200)
  POSTMARK_WEBHOOK_PASSWORD?: string;

  /** Mailgun's HTTP webhook signing key (Sending → Webhooks). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(8)
  MAILGUN_WEBHOOK_SIGNING_KEY?: string;

  /**
   * Days an e-mail event (`email_events`: sent, delivered, opened, clicked, bounced...) is kept before
   * MongoDB's TTL monitor removes it. Analytics read their own counters, which stay
   * (docs/operations/data-retention.md "E-mail events").
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  EMAIL_EVENTS_RETENTION_DAYS = 400;

  /**
   * The complaint rate (percent of delivered) above which a campaign is held: Gmail's target is below 0.1,
   * its ceiling 0.3 (docs/operations/email-delivery.md "Complaint guard").
   */
  @Transform(toInt)
  @IsNumber({ maxDecimalPlaces: 3 }, { message: 'must be a percentage such as 0.1' })
  @Min(0.001)
  @Max(5)
  COMPLAINT_GUARD_RATE_PERCENT = 0.1;

  /** Deliveries a campaign needs before the guard judges it: a few complaints of a few hundred say little. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(1_000_000)
  COMPLAINT_GUARD_MIN_DELIVERED = 1_000;
}

/** The settings each provider's webhook check needs (providers/). */
const PROVIDER_SECRETS: Record<Exclude<EmailProviderName, 'resend'>, (keyof EmailEventsEnv)[]> = {
  ses: ['SES_SNS_TOPIC_ARNS'],
  sendgrid: ['SENDGRID_WEBHOOK_PUBLIC_KEY'],
  postmark: ['POSTMARK_WEBHOOK_USER', 'POSTMARK_WEBHOOK_PASSWORD'],
  mailgun: ['MAILGUN_WEBHOOK_SIGNING_KEY'],
};

/**
 * In production, a provider other than the default needs its secret: without it every webhook would be
 * refused and bounces would go unnoticed. Resend, the default, stays as it always was: a service that takes
 * no provider webhooks (WEBHOOK_SECRET unset, every request refused) is valid. Whether EMAIL_PROVIDER was
 * set cannot tell them apart: the configuration module writes the defaults it validated back into the
 * environment, so a second start in the same process sees `resend` as if it had been given.
 */
function providerSecretProblems(env: EmailEventsEnv & { NODE_ENV: string }): string[] {
  if (env.NODE_ENV === 'production' && (env.SNS_TEST_ENDPOINT || env.SNS_TEST_CA_FILE)) {
    return [
      '  SNS_TEST_ENDPOINT: stands in for Amazon SNS in tests and benchmarks; refused when NODE_ENV=production',
    ];
  }
  const provider = env.EMAIL_PROVIDER;
  if (env.NODE_ENV !== 'production' || provider === 'resend' || !EMAIL_PROVIDERS.includes(provider)) {
    return [];
  }
  return PROVIDER_SECRETS[provider]
    .filter((name) => env[name] === undefined)
    .map((name) => `  ${name}: is required when NODE_ENV=production and EMAIL_PROVIDER=${provider}`);
}

export const emailEventsEnv: EnvSection<EmailEventsEnv> = {
  schema: EmailEventsEnv,
  checks: providerSecretProblems,
};
