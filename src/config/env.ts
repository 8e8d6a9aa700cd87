import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  type ValidationError,
  validateSync,
} from 'class-validator';
import { validateCronExpression } from 'cron';
import { createPublicKey } from 'node:crypto';
import { isIP } from 'node:net';
import { IsHttpUrl } from '../common/validation/http-url.decorator';
import { resolveAppSecret } from './app-secret';
import { dataDirProblem } from './data-dir';
import { databaseNameOf, hostsOf } from './mongodb-uri';
import { publicAddressProblems } from './public-addresses';
import { PROXY_RANGE_NAMES, trustProxyProductionProblem } from './trust-proxy';

/** A lifetime such as `15m`, `1h` or `7d`, as the JWT library takes it. */
export type Duration = `${number}${'s' | 'm' | 'h' | 'd'}`;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NODE_ENVS = ['development', 'production', 'test'] as const;
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
const DEV_DATABASE_DURABILITIES = ['commit', 'delayed'] as const;
/** Whose signed webhooks `POST /email-events/primary-provider` reads (docs/api/providers/README.md). */
export const EMAIL_PROVIDERS = ['resend', 'ses', 'sendgrid', 'postmark', 'mailgun'] as const;
export type EmailProviderName = (typeof EMAIL_PROVIDERS)[number];
/** An SNS topic's ARN, e.g. arn:aws:sns:eu-west-1:123456789012:ses-events. */
const SNS_TOPIC_ARN = /^arn:aws(-[a-z]+)*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;
export const EMAIL_TRANSPORTS = ['smtp', 'resend-api', 'outbox'] as const;
export type EmailTransportName = (typeof EMAIL_TRANSPORTS)[number];

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value !== '' ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** A cron expression as `@nestjs/schedule` (the `cron` package) reads it: 5 fields, or 6 with seconds first. */
const IsCronExpression = () =>
  ValidateBy({
    name: 'isCronExpression',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && validateCronExpression(value).valid,
      defaultMessage: () => 'must be a cron expression such as "0 8 * * *" (minute hour day month weekday)',
    },
  });

/** A `redis://` or `rediss://` (TLS) URL with a host, as ioredis reads it; the path, if any, is a db number. */
function isRedisUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'redis:' || url.protocol === 'rediss:') &&
      url.hostname !== '' &&
      /^(\/\d{0,2})?$/.test(url.pathname)
    );
  } catch {
    return false;
  }
}
const IsRedisUrl = () =>
  ValidateBy({
    name: 'isRedisUrl',
    validator: {
      validate: isRedisUrl,
      defaultMessage: () =>
        'must be a redis:// or rediss:// URL such as redis://redis:6379 or redis://:password@host:6379/0',
    },
  });

/** An IP, a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a named range, as one entry of a TRUST_PROXY list. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** `true`, a hop count, or a comma-separated list of the load balancer's IPs/CIDRs. */
function isTrustProxy(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (value === 'true' || /^\d{1,2}$/.test(value)) return true;
  return value.split(',').every((entry) => isProxyEntry(entry.trim()));
}
const IsTrustProxy = () =>
  ValidateBy({
    name: 'isTrustProxy',
    validator: {
      validate: isTrustProxy,
      defaultMessage: () =>
        "must be the load balancer's IPs/CIDRs (comma-separated, e.g. 10.0.0.0/8), a hop count, or true",
    },
  });

/**
 * The service's environment, with exactly the names of the README's configuration table (plus NODE_ENV, LOG_LEVEL,
 * BCRYPT_COST and the worker's tuning). Validated by `ConfigModule.forRoot({ validate: validateEnv })`.
 */
export class Env {
  @IsIn(NODE_ENVS)
  NODE_ENV: (typeof NODE_ENVS)[number] = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^mongodb(\+srv)?:\/\/\S+$/, {
    message: 'must be a mongodb:// or mongodb+srv:// connection string',
  })
  MONGODB_URI?: string;

  /**
   * How long start-up waits for the database of MONGODB_URI before it stops with one line naming it (the
   * embedded dev database has its own wait).
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  MONGODB_STARTUP_TIMEOUT_MS = 30_000;

  @IsString()
  @MinLength(1)
  DATA_DIR = '.data';

  /**
   * Heap limit of the embedded dev database's JVM (without MONGODB_URI): its data is in DATA_DIR, the heap
   * holds caches and one query's working set. Raise it when a query over a large collection runs out.
   */
  @Matches(/^[1-9]\d{0,5}[mMgG]$/, { message: 'must be a JVM heap size such as 512m or 1g' })
  DEV_DATABASE_MAX_HEAP = '512m';

  /**
   * When the embedded dev database answers a write: `commit` once it is on disk (no acknowledged write is
   * lost to a crash), `delayed` at once (faster; a crash loses up to about a second of writes). Logged at start.
   */
  @IsIn(DEV_DATABASE_DURABILITIES)
  DEV_DATABASE_DURABILITY: (typeof DEV_DATABASE_DURABILITIES)[number] = 'commit';

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'must be at least 32 characters' })
  APP_SECRET?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @Matches(/^[^\s@]+@[^\s@]+$/, { message: 'must be an e-mail address' })
  ADMIN_EMAIL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(6)
  @MaxLength(72, { message: 'must be at most 72 characters (bcrypt)' })
  ADMIN_PASSWORD?: string;

  /** bcrypt work factor of stored passwords: each step doubles the time of a login (12 ≈ 0.25 s here). */
  @Transform(toInt)
  @IsInt()
  @Min(4)
  @Max(14)
  BCRYPT_COST = 12;

  @Matches(/^\d+[smhd]$/, { message: 'must be a duration such as 15m, 1h or 7d' })
  JWT_EXPIRES_IN: Duration = '1h';

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  PUBLIC_BASE_URL?: string;

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
   * files). Unset: `smtp` when SMTP_URL is set, else `outbox`. docs/operations/email-transports.md.
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

  // ---- Sending domains (docs/operations/sending-domains.md) ----
  /**
   * DNS servers that check sender domains' records, `host:port` comma-separated (a local server in tests
   * and staging); unset: the system resolver.
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((server) => server.trim())
          .filter(Boolean)
      : (value ?? []),
  )
  @ValidateBy({
    name: 'isDnsServerList',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) &&
        value.every(
          (server) => typeof server === 'string' && /^(\[[0-9a-fA-F:.]+\]|[\w.-]+)(:\d{1,5})?$/.test(server),
        ),
      defaultMessage: () => 'must be host:port entries separated by commas, e.g. 127.0.0.1:5353',
    },
  })
  DNS_SERVERS: string[] = [];

  /** The SPF mechanism that authorises the outgoing servers, published in every sender domain's SPF record. */
  @IsString()
  @Matches(/^(include|a|mx|ip4|ip6):?\S*$/, {
    message: 'must be one SPF mechanism, e.g. include:_spf.relay.example',
  })
  SENDING_SPF_INCLUDE = 'mx';

  /** How often the worker re-checks verified sender domains' records; 0 turns the re-check off. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(7 * 24 * 3_600_000)
  SENDER_DOMAIN_RECHECK_MS = 6 * 3_600_000;
  // ---- end of sending domains ----

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

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsHttpUrl()
  CHAT_DEFAULT_WEBHOOK_URL?: string;

  /** Who may name the client in X-Forwarded-For; production takes only narrow ranges (trust-proxy.ts). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsTrustProxy()
  TRUST_PROXY?: string;

  /** Shared storage of the rate-limit counters when several instances run; unset: each process counts alone. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsRedisUrl()
  REDIS_URL?: string;

  /** Run the chat notification delivery (and the daily digest) in this process. */
  @Transform(toBool)
  @IsBoolean()
  CHAT_WORKER_ENABLED = true;

  /** How often the chat delivery polls the outbox. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  CHAT_WORKER_INTERVAL_MS = 2000;

  /** When the daily chat digest goes out (server time zone). */
  @IsCronExpression()
  CHAT_DIGEST_CRON = '0 8 * * *';

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

  /** How long a claimed job stays with its worker before another may reap it (crash recovery). */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  EMAIL_WORKER_LEASE_MS = 300_000;

  /**
   * How long a worker (e-mail queue, chat delivery) may take to stop on SIGTERM: work in flight finishes
   * within it, or its jobs are released (docs/decisions.md, issue 25).
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  WORKER_SHUTDOWN_MS = 30_000;

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
   * Days a delivered or dead chat notification is kept. At least 2: the daily digest counts the
   * notifications of the 24 hours before it runs.
   */
  @Transform(toInt)
  @IsInt()
  @Min(2)
  @Max(3650)
  CHAT_NOTIFICATION_RETENTION_DAYS = 30;

  /** Requests per minute one client (IP) may make across all routes; some routes allow fewer. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  RATE_LIMIT_PER_MINUTE = 600;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** `auto`: readable lines in a terminal outside production, JSON otherwise (see src/common/logging). */
  @IsIn(LOG_FORMATS)
  LOG_FORMAT: (typeof LOG_FORMATS)[number] = 'auto';

  get publicBaseUrl(): string {
    return (this.PUBLIC_BASE_URL ?? `http://localhost:${this.PORT}`).replace(/\/+$/, '');
  }
}

/**
 * The validated environment with the master secret resolved. Read it through
 * `ConfigService<AppConfig, true>`: `config.get('PORT', { infer: true })` is a number, never undefined.
 * (Inject `ConfigService` by its class in the constructor: a type alias would lose the DI token.)
 */
export type AppConfig = Omit<Env, 'APP_SECRET'> & { readonly APP_SECRET: string };

/** Thrown at start-up when the environment is invalid; the message names every offending variable. */
export class InvalidEnvironmentError extends Error {}

/** Production keeps passwords at a real work factor; tests and development may go lower to run fast. */
const PRODUCTION_MIN_BCRYPT_COST = 10;

/**
 * Production runs on a MongoDB the operator names, never on the embedded stand-in (it is a development tool,
 * started only when MONGODB_URI is unset), and in a database the URI names (without one the driver writes to
 * `test`). The message shows the hosts, never the credentials.
 */
function productionDatabaseProblems(uri: string | undefined): string[] {
  if (!uri) {
    return [
      '  MONGODB_URI: is required when NODE_ENV=production (the embedded dev database runs only outside ' +
        'production), e.g. mongodb://db.internal:27017/admin-service',
    ];
  }
  // A malformed URI is already reported by its format rule.
  if (!/^mongodb(\+srv)?:\/\//.test(uri) || databaseNameOf(uri) !== '') return [];
  return [
    `  MONGODB_URI: names no database (${hostsOf(uri)}); when NODE_ENV=production add one after the hosts, ` +
      'e.g. mongodb://db.internal:27017/admin-service',
  ];
}

/** The checks that say what kind of value is expected; when one fails, the range checks after it add nothing. */
const TYPE_CHECKS = ['isInt', 'isBoolean', 'isString', 'isIn'];

/**
 * One message for one variable: `PORT=abc` fails isInt, Min and Max at once, and only "must be an integer"
 * helps. Without a failed type check, the first failed rule. class-validator's messages start with the
 * property's name, which the line already shows.
 */
function oneProblem(error: ValidationError): string {
  const constraints = error.constraints ?? {};
  const rule = TYPE_CHECKS.find((name) => name in constraints) ?? Object.keys(constraints)[0];
  const message = constraints[rule] ?? 'is invalid';
  return message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message;
}

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

/** The settings each provider's webhook check needs (src/email/events/providers/). */
const PROVIDER_SECRETS: Record<Exclude<EmailProviderName, 'resend'>, (keyof Env)[]> = {
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
function providerSecretProblems(env: Env): string[] {
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

/** The chosen transport's settings are there, and production speaks to the API only over TLS. */
function emailTransportProblems(env: Env): string[] {
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
  return problems;
}

/**
 * Validates and types the environment (the `validate` of ConfigModule, which merged `.env` under it): a bad
 * value stops the process with a message naming the variable.
 */
export function validateEnv(raw: Record<string, unknown>): AppConfig {
  const env = plainToInstance(Env, raw, { exposeDefaultValues: true });
  const errors = validateSync(env, { skipMissingProperties: false });
  const problems = errors.map((error) => `  ${error.property}: ${oneProblem(error)}`);
  const dataDir = errors.some((error) => error.property === 'DATA_DIR')
    ? undefined
    : dataDirProblem(env.DATA_DIR);
  if (dataDir) problems.push(`  DATA_DIR: ${dataDir}`);
  if (env.NODE_ENV === 'production' && env.BCRYPT_COST < PRODUCTION_MIN_BCRYPT_COST) {
    problems.push(`  BCRYPT_COST: must be at least ${PRODUCTION_MIN_BCRYPT_COST} when NODE_ENV=production`);
  }
  const trustProxy = errors.some((error) => error.property === 'TRUST_PROXY') ? undefined : env.TRUST_PROXY;
  const tooTrusting = env.NODE_ENV === 'production' && trustProxy && trustProxyProductionProblem(trustProxy);
  if (tooTrusting) problems.push(tooTrusting);
  problems.push(...emailTransportProblems(env));
  const secret = problems.length === 0 ? resolveAppSecret(env) : undefined;
  if (secret === null) problems.push('  APP_SECRET: is required when NODE_ENV=production');
  if (env.NODE_ENV === 'production') problems.push(...productionDatabaseProblems(env.MONGODB_URI));
  problems.push(...providerSecretProblems(env));
  // Sending identity (docs/operations/sending-domains.md): no placeholder From or link host in production.
  if (env.NODE_ENV === 'production') problems.push(...publicAddressProblems(env));
  if (problems.length > 0 || !secret) {
    // One variable fits on the line; several get a line each.
    const listed = problems.length === 1 ? ` ${problems[0].trim()}` : `\n${problems.join('\n')}`;
    throw new InvalidEnvironmentError(`Invalid configuration:${listed}`);
  }
  return Object.assign(env, { APP_SECRET: secret });
}
