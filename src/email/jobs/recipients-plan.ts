import { BadRequestException } from '@nestjs/common';
import type { BatchPlan } from './batch-plan';
import { isEmailAddress, type EmailMessage } from './email-message';

/** Recipients one inline `recipients` plan may carry; larger audiences need a planner that pages a collection. */
export const MAX_INLINE_RECIPIENTS = 1_000;

export interface RecipientsPlan extends BatchPlan {
  kind: 'recipients';
  message: Omit<EmailMessage, 'to' | 'variables'>;
  recipients: { to: string; variables?: Record<string, unknown> }[];
}

/** Checks an inline plan when it is enqueued, so a bad one fails the caller instead of dying in the queue. */
export function assertRecipientsPlan(plan: RecipientsPlan): void {
  if (!Array.isArray(plan.recipients) || plan.recipients.length === 0) {
    throw new BadRequestException('recipients must be a non-empty array');
  }
  if (plan.recipients.length > MAX_INLINE_RECIPIENTS) {
    throw new BadRequestException(`recipients: at most ${MAX_INLINE_RECIPIENTS} per plan`);
  }
  const bad = plan.recipients.findIndex((recipient) => !isEmailAddress(recipient?.to));
  if (bad >= 0) throw new BadRequestException(`recipients[${bad}].to must be an e-mail address`);
}
