import { type QueryFilter, trusted, Types } from 'mongoose';
import type { Contact, Locale, SubscriptionStatus } from './schemas/contact.schema';

/**
 * Which of an app's subscribers an audience walk selects by their record (docs/api/newsletters.md
 * "Segments"); engagement is judged apart, from e-mail events. Every field narrows; none given: the app's
 * active subscribers, the whole-app campaign audience.
 */
export interface AudienceCriteria {
  /** The subscription's status; `active` when absent. */
  status?: SubscriptionStatus;
  source?: string;
  locale?: Locale;
  /** Subscribed strictly before / at or after this time. */
  subscribedBefore?: Date;
  subscribedAfter?: Date;
  /** People who dropped none of these topics (a topic's campaign skips who dropped it). */
  keepsTopics?: string[];
}

/**
 * The filter of an audience walk in `_id` order after `afterId`. Everything about the subscription is in
 * one `$elemMatch` (the same array element must match), served with the rest by the contacts' audience
 * index. Active subscribers also need `blog` consent not withdrawn (docs/architecture.md "Who gets what").
 */
export function audienceFilter(
  appId: string,
  criteria: AudienceCriteria,
  afterId: string | null,
): QueryFilter<Contact> {
  const status = criteria.status ?? 'active';
  const subscribedAt = {
    ...(criteria.subscribedAfter ? { $gte: criteria.subscribedAfter } : {}),
    ...(criteria.subscribedBefore ? { $lt: criteria.subscribedBefore } : {}),
  };
  const subscription = {
    appId,
    status,
    ...(criteria.source !== undefined ? { source: criteria.source } : {}),
    ...(Object.keys(subscribedAt).length > 0 ? { subscribedAt } : {}),
    ...(criteria.keepsTopics?.length ? { droppedTopics: { $nin: criteria.keepsTopics } } : {}),
  };
  return {
    subscriptions: trusted({ $elemMatch: subscription }),
    ...(status === 'active' ? { 'consent.blog': trusted({ $ne: false }) } : {}),
    deletedAt: null,
    ...(criteria.locale !== undefined ? { locale: criteria.locale } : {}),
    ...(afterId ? { _id: trusted({ $gt: new Types.ObjectId(afterId) }) } : {}),
  };
}
