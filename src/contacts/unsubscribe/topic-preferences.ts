import { Injectable } from '@nestjs/common';
import { isObjectIdOrHexString } from 'mongoose';
import { type ChangeOrigin, consentEvent, subscriptionOf, withSubscription } from '../contact-ledger';
import { ContactsService } from '../contacts.service';
import type { Contact } from '../schemas/contact.schema';
import type { NewsletterTopic } from '../topics/newsletter-topics.schema';
import { NewsletterTopicsService } from '../topics/newsletter-topics.service';

/** One topic as the preference page shows it. */
export interface TopicChoice extends NewsletterTopic {
  kept: boolean;
}

/**
 * A subscriber's newsletter topics (docs/api/newsletters.md "Topics and the preference page"): which of the
 * app's topics they keep, and the changes, each a `blog` consent event naming its topic with its source.
 * A dropped topic stays in the subscription's `droppedTopics`, which campaigns of that topic skip.
 */
@Injectable()
export class TopicPreferences {
  constructor(
    private readonly contacts: ContactsService,
    private readonly topics: NewsletterTopicsService,
  ) {}

  /** The choices of an active subscriber of an app with topics; null otherwise (the plain page then). */
  async choices(contactId: string, appId: string): Promise<TopicChoice[] | null> {
    const contact = await this.subscriber(contactId);
    const subscription = contact && subscriptionOf(contact, appId);
    if (subscription?.status !== 'active') return null;
    const topics = await this.topics.list(appId);
    if (topics.length === 0) return null;
    const dropped = new Set(subscription.droppedTopics ?? []);
    return topics.map(({ key, name }) => ({ key, name, kept: !dropped.has(key) }));
  }

  /**
   * Keeps exactly `kept` of the app's topics and drops the others. Keys that are not the app's topics are
   * ignored; choices about topics the app has since removed stay as they were. False when nothing changed.
   */
  async save(contactId: string, appId: string, kept: string[], origin: ChangeOrigin): Promise<boolean> {
    const keys = (await this.topics.list(appId)).map((topic) => topic.key);
    const keep = new Set(kept);
    return this.apply(contactId, appId, origin, (dropped) => {
      const others = dropped.filter((key) => !keys.includes(key));
      return [...others, ...keys.filter((key) => !keep.has(key))];
    });
  }

  /** Drops one topic (a campaign's one-click unsubscribe): only a topic the app declares. */
  async drop(contactId: string, appId: string, topic: string, origin: ChangeOrigin): Promise<boolean> {
    const keys = (await this.topics.list(appId)).map((declared) => declared.key);
    if (!keys.includes(topic)) return false;
    return this.apply(contactId, appId, origin, (dropped) =>
      dropped.includes(topic) ? dropped : [...dropped, topic],
    );
  }

  private async apply(
    contactId: string,
    appId: string,
    origin: ChangeOrigin,
    next: (dropped: string[]) => string[],
  ): Promise<boolean> {
    const start = await this.subscriber(contactId);
    if (!start) return false;
    const { result } = await this.contacts.change(start, (current) => {
      const subscription = subscriptionOf(current, appId);
      if (subscription?.status !== 'active') return { change: null, result: false };
      const before = subscription.droppedTopics ?? [];
      const after = next(before);
      const events = [
        ...after.filter((key) => !before.includes(key)).map((topic) => [topic, false] as const),
        ...before.filter((key) => !after.includes(key)).map((topic) => [topic, true] as const),
      ].map(([topic, kept]) =>
        consentEvent('blog', kept, {
          ...origin,
          appId,
          topic,
          reason: origin.reason ?? `${kept ? 'Kept' : 'Dropped'} the topic ${topic}`,
        }),
      );
      if (events.length === 0) return { change: null, result: false };
      const subscriptions = withSubscription(current.subscriptions, {
        ...subscription,
        droppedTopics: after,
      });
      return { change: { set: { subscriptions }, events }, result: true };
    });
    return result;
  }

  private async subscriber(contactId: string): Promise<Contact | null> {
    const contact = isObjectIdOrHexString(contactId) ? await this.contacts.findById(contactId) : null;
    return contact && !contact.deletedAt ? contact : null;
  }
}
