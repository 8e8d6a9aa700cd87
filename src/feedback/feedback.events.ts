import type { FeedbackType } from './schemas/feedback.schema';

/** Domain events of feedback, for chat notifications (channel `feedback`). */
export const FeedbackEvents = {
  Created: 'feedback.created',
} as const;

export interface FeedbackCreatedEvent {
  appId: string;
  feedbackId: string;
  type: FeedbackType;
  subject: string;
}
