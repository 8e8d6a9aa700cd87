import { BadRequestException } from '@nestjs/common';
import { isSendableAddress } from '../../common/validation/email-address';
import type { EmailStream } from './schemas/email-job.schema';

/**
 * One e-mail to send: literal content, or a stored template rendered at send time with `variables`.
 * This is the payload of an `email.send` job.
 */
export interface EmailMessage {
  to: string;
  /** The app the message is sent for (template scope, statistics); null or absent for service mail. */
  appId?: string | null;
  /** Overrides the template's sender and `MAIL_FROM`. */
  from?: string;
  replyTo?: string;
  subject?: string;
  html?: string;
  text?: string;
  template?: { name: string; language?: string };
  /**
   * The kind of a registered `MessageComposer` that renders subject, HTML and text when the message is sent
   * (campaign mail), from `variables` and the message's other fields; the job then stores no body.
   */
  composer?: string;
  variables?: Record<string, unknown>;
  /**
   * The message's secrets (a sign-in token) sealed by `JobSecrets`: only its composer opens them, when the
   * message is sent. Never in clear in the queue, shown redacted by every job view.
   */
  sealed?: string;
  /** Bulk mail: adds `List-Unsubscribe` and the RFC 8058 one-click header. */
  unsubscribeUrl?: string;
  campaignId?: string;
  contactId?: string;
  /**
   * The campaign whose broadcast headers the message carries (Feedback-ID, List-Id, bulk markers), when it
   * is not one of its counted messages: a test copy. A campaign's own messages are broadcast by `campaignId`.
   */
  broadcastOf?: string;
}

export interface EnqueueOptions {
  /** Enqueuing the same key twice gives the same job; a random key is used when absent. */
  idempotencyKey?: string;
  /**
   * The key was never used before: it names a record the caller has just created (a new person's welcome).
   * The message ledger, which remembers keys of expired jobs, is then not asked (one round trip less).
   */
  keyIsNew?: boolean;
  /** Higher runs first within its stream; default 0. */
  priority?: number;
  /** Its stream; default `broadcast` for a campaign's mail or a batch, else `transactional`. */
  stream?: EmailStream;
  /** Not before this time; default now. */
  scheduledAt?: Date;
  maxAttempts?: number;
}

/**
 * Where the service stops a message before it reaches the queue
 * (docs/decisions/data-retention-and-bounded-documents.md); the recipient's address follows the service's one
 * address rule (`isSendableAddress`).
 */
export const MESSAGE_LIMITS = {
  subject: 998,
  body: 2_000_000,
  idempotencyKey: 200,
  maxAttempts: 20,
} as const;

/** Rejects a message the worker could never send, naming the field (400 when it comes from a request). */
export function assertSendable(message: EmailMessage, options: EnqueueOptions = {}): void {
  const problems: string[] = [];
  if (!isSendableAddress(message.to)) problems.push('to must be an e-mail address');
  if (message.template) {
    if (typeof message.template.name !== 'string' || message.template.name.length === 0) {
      problems.push('template.name must be a non-empty string');
    }
  } else if (message.composer !== undefined) {
    if (typeof message.composer !== 'string' || message.composer.length === 0) {
      problems.push('composer must be a non-empty string');
    }
  } else {
    if (!message.subject) problems.push('subject is required without a template');
    if (!message.html && !message.text) problems.push('html or text is required without a template');
  }
  if ((message.subject?.length ?? 0) > MESSAGE_LIMITS.subject) problems.push('subject is too long');
  if ((message.html?.length ?? 0) + (message.text?.length ?? 0) > MESSAGE_LIMITS.body) {
    problems.push('html and text are too large');
  }
  if (message.unsubscribeUrl !== undefined && !/^https?:\/\/\S+$/.test(message.unsubscribeUrl)) {
    problems.push('unsubscribeUrl must be an http(s) URL');
  }
  const key = options.idempotencyKey;
  if (key !== undefined && (key.length === 0 || key.length > MESSAGE_LIMITS.idempotencyKey)) {
    problems.push(`idempotencyKey must be 1 to ${MESSAGE_LIMITS.idempotencyKey} characters`);
  }
  const attempts = options.maxAttempts;
  if (
    attempts !== undefined &&
    !(Number.isInteger(attempts) && attempts >= 1 && attempts <= MESSAGE_LIMITS.maxAttempts)
  ) {
    problems.push(`maxAttempts must be an integer from 1 to ${MESSAGE_LIMITS.maxAttempts}`);
  }
  if (problems.length > 0) throw new BadRequestException(problems.join('; '));
}
