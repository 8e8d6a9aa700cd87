import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { IsHttpUrl } from '../common/validation/http-url.decorator';
import { emptyToUndefined, type EnvSection, toBool, toInt } from '../config/env-rules';

export const EMAIL_TRANSPORTS = ['smtp', 'resend-api', 'outbox'] as const;
export type EmailTransportName = (typeof EMAIL_TRANSPORTS)[number];

/** How mail leaves (docs/operations/email-transports.md), and the worker that sends it. */
export class EmailEnv {
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^smtps?:\/\/\S+$/, { message: 'must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;

  /**
   * The most one SMTP send may take, connecting included: past it the attempt fails (the job is retried)
   * and the connection pool is replaced. Well inside EMAIL_WORKER_LEASE_MS.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(600_000)
  SMTP_SEND_TIMEOUT_MS = 60_000;

  /**
   * How mail leaves: `smtp` (SMTP_URL), `resend-api` (Resend's HTTP API, RESEND_API_KEY) or `outbox` (`.eml`
   * files). Unset: `smtp` when SMTP_URL is set, else `outbox`.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(EMAIL_TRANSPORTS)
  EMAIL_TRANSPORT?: EmailTransportName;

  /** The API key of `EMAIL_TRANSPORT=resend-api` (`re_…`): a secret, never logged. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MaxLength(512)
  RESEND_API_KEY?: string;

  /** Resend's API base URL; another only for a test receiver (https only when NODE_ENV=production). */
  @IsHttpUrl()
  RESEND_API_URL = 'https://api.resend.com';

  /** The most one Resend API request may take, connecting included; past it the job is retried. */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(600_000)
  RESEND_API_TIMEOUT_MS = 30_000;

  @IsString()
  @MinLength(3)
  MAIL_FROM = 'Admin Service <no-reply@localhost>';

  @Transform(toInt)
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  EMAIL_WORKER_INTERVAL_MS = 1000;

  @Transform(toBool)
  @IsBoolean()
  EMAIL_WORKER_ENABLED = true;

  /** Messages the worker has in flight at once (and SMTP connections in its pool). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  EMAIL_WORKER_CONCURRENCY = 10;

  /** Messages per second the worker sends at most (a provider's limit); 0 = no limit. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100_000)
  EMAIL_WORKER_RATE_PER_SECOND = 0;

  /**
   * Each stream's own slots and rate budget (docs/operations/email-delivery.md, "Streams"); unset: the
   * worker's (`EMAIL_WORKER_CONCURRENCY`, `EMAIL_WORKER_RATE_PER_SECOND`).
   */
  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000)
  EMAIL_TRANSACTIONAL_CONCURRENCY?: number;

  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100_000)
  EMAIL_TRANSACTIONAL_RATE_PER_SECOND?: number;

  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000)
  EMAIL_BROADCAST_CONCURRENCY?: number;

  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100_000)
  EMAIL_BROADCAST_RATE_PER_SECOND?: number;

  /** How long a claimed job stays with its worker before another may reap it (crash recovery). */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  EMAIL_WORKER_LEASE_MS = 300_000;

  /**
   * Days a completed or dead e-mail job is kept before MongoDB's TTL monitor removes it. What later steps
   * need of it (its idempotency key, who a sent message was for) stays in the message ledger for
   * `EMAIL_MESSAGE_RETENTION_DAYS` (docs/operations/data-retention.md).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  EMAIL_JOB_RETENTION_DAYS = 30;

  /**
   * Days a message's ledger entry (`email_messages`: idempotency key, Message-ID, recipient, app, campaign)
   * is kept after its last event (queued, sent, or a provider event about it): as long as providers may
   * still report a bounce or complaint, and as long as a reused idempotency key must not send again.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  EMAIL_MESSAGE_RETENTION_DAYS = 180;
}

/** The chosen transport's settings are there, and production speaks to the API only over TLS. */
function emailTransportProblems(env: EmailEnv & { NODE_ENV: string }): string[] {
  const problems: string[] = [];
  if (env.EMAIL_TRANSPORT === 'smtp' && !env.SMTP_URL) {
    problems.push('  SMTP_URL: is required when EMAIL_TRANSPORT=smtp');
  }
  if (env.EMAIL_TRANSPORT === 'resend-api' && !env.RESEND_API_KEY) {
    problems.push('  RESEND_API_KEY: is required when EMAIL_TRANSPORT=resend-api');
  }
  if (env.NODE_ENV === 'production' && !/^https:/i.test(env.RESEND_API_URL)) {
    problems.push(
      '  RESEND_API_URL: must be an https:// URL when NODE_ENV=production (the API key travels in each request)',
    );
  }
  // Mail to files is a development default; in production it must be asked for (EMAIL_TRANSPORT=outbox).
  if (env.NODE_ENV === 'production' && !env.EMAIL_TRANSPORT && !env.SMTP_URL) {
    problems.push(
      '  SMTP_URL: is required when NODE_ENV=production (without it mail is only written to files in ' +
        'DATA_DIR/outbox; set EMAIL_TRANSPORT=outbox to want exactly that)',
    );
  }
  return problems;
}

export const emailEnv: EnvSection<EmailEnv> = { schema: EmailEnv, checks: emailTransportProblems };
