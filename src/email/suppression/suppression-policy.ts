import type { EmailStream } from '../jobs/schemas/email-job.schema';
import type { Suppression, SuppressionCauses, SuppressionReason } from './schemas/suppression.schema';

/**
 * Every message belongs to a stream (the job's `stream`, docs/operations/email-delivery.md "Streams"):
 * `broadcast` (campaigns, newsletters) or `transactional` (sign-in, confirmation, welcome, system mail).
 */
export type MailStream = EmailStream;

/**
 * Which causes stop which stream (docs/operations/email-delivery.md "Suppression"): a hard bounce stops all
 * mail (the mailbox does not exist); a complaint, an opt-out and repeated soft bounces stop broadcasts from
 * every app, while mail the person asked for (a sign-in link, a confirmation) still goes. An unsubscribe
 * from one app's newsletter is that subscription's status, which campaigns read; it is no entry here.
 */
const STOPS: Record<SuppressionReason, readonly MailStream[]> = {
  hard_bounce: ['transactional', 'broadcast'],
  complaint: ['broadcast'],
  opt_out: ['broadcast'],
  soft_bounce: ['broadcast'],
};

/** In the order a skipped job names them: the most final first. */
const PRECEDENCE: readonly SuppressionReason[] = ['hard_bounce', 'complaint', 'opt_out', 'soft_bounce'];

/** An entry's causes in force, an entry written before causes were kept apart read as its one reason. */
export function causesOf(entry: Pick<Suppression, 'causes' | 'reason' | 'appId' | 'source' | 'updatedAt'>) {
  const causes: SuppressionCauses = { ...(entry.causes ?? {}) };
  if (entry.reason && !causes[entry.reason]) {
    causes[entry.reason] = {
      source: entry.source ?? 'unknown',
      appId: entry.appId ?? null,
      at: entry.updatedAt ?? new Date(0),
    };
  }
  return causes;
}

/** The most final cause in force (what a view of the entry names), or null for none. */
export function mostFinal(causes: SuppressionCauses): SuppressionReason | null {
  return PRECEDENCE.find((reason) => causes[reason]) ?? null;
}

/** The cause that stops mail of this stream, or null when it may go. */
export function blockingCause(causes: SuppressionCauses, stream: MailStream): SuppressionReason | null {
  return PRECEDENCE.find((reason) => causes[reason] && STOPS[reason].includes(stream)) ?? null;
}
