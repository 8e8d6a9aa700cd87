import { BadRequestException } from '@nestjs/common';
import { isSendableAddress } from '../../common/validation/email-address';
import type { BatchPlan } from './batch-plan';
import type { EmailMessage } from './email-message';

/**
 * Recipients one inline `recipients` plan may carry; larger audiences need a planner that pages a collection.
 */
export const MAX_INLINE_RECIPIENTS = 1_000;

export interface Recipient {
  to: string;
  variables?: Record<string, unknown>;
}

export interface RecipientsPlan extends BatchPlan {
  kind: 'recipients';
  message: Omit<EmailMessage, 'to' | 'variables'>;
  recipients: Recipient[];
}

/** Checks the list's shape: what a plan needs to run at all. */
function assertRecipientsList(plan: RecipientsPlan): void {
  if (!Array.isArray(plan.recipients) || plan.recipients.length === 0) {
    throw new BadRequestException('recipients must be a non-empty array');
  }
  if (plan.recipients.length > MAX_INLINE_RECIPIENTS) {
    throw new BadRequestException(`recipients: at most ${MAX_INLINE_RECIPIENTS} per plan`);
  }
}

/** Checks an inline plan when it is enqueued, so a bad one fails the caller instead of dying in the queue. */
export function assertRecipientsPlan(plan: RecipientsPlan): void {
  assertRecipientsList(plan);
  const bad = plan.recipients.findIndex((recipient) => !isSendableAddress(recipient?.to));
  if (bad >= 0) throw new BadRequestException(`recipients[${bad}].to must be an e-mail address`);
}

/**
 * A stored plan's recipients, split into those the queue takes and those it never will: a plan enqueued
 * before the address rule may name addresses the rule now refuses, and one of them must not stop the rest
 * (they are recorded as skipped instead). Non-string entries count as unsendable, under a printable form.
 */
export function splitRecipients(plan: RecipientsPlan): { sendable: Recipient[]; unsendable: string[] } {
  assertRecipientsList(plan);
  const sendable: Recipient[] = [];
  const unsendable: string[] = [];
  for (const recipient of plan.recipients) {
    const to: unknown = recipient?.to;
    if (isSendableAddress(to)) sendable.push(recipient);
    else unsendable.push(typeof to === 'string' ? to : String(to));
  }
  return { sendable, unsendable };
}
