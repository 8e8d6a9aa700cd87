import type { Consent, ConsentCategory, ConsentEvent, Contact, Subscription } from './schemas/contact.schema';

/** An event to append to the consent ledger; the time (and id) are the change's. */
export type NewConsentEvent = Omit<ConsentEvent, 'at' | '_id'>;

/**
 * What one change does to a person: fields to replace and ledger events to append. The ledger is only ever
 * appended to here; nothing can rewrite an entry through a change.
 */
export interface ContactChange {
  set?: Partial<Pick<Contact, 'firstName' | 'lastName' | 'locale' | 'tags' | 'consent' | 'subscriptions'>>;
  events?: NewConsentEvent[];
}

/** Who or what made a change, and from where (recorded on each ledger event). */
export interface ChangeOrigin {
  source: string;
  actor: string;
  appId?: string | null;
  ip?: string | null;
  referralUrl?: string | null;
  reason?: string | null;
  /** The newsletter topic the event is about (the preference page, a topic's one-click unsubscribe). */
  topic?: string | null;
}

export function consentEvent(
  category: ConsentCategory,
  status: boolean,
  origin: ChangeOrigin,
): NewConsentEvent {
  return {
    category,
    status,
    reason: origin.reason ?? null,
    source: origin.source,
    appId: origin.appId ?? null,
    actor: origin.actor,
    ip: origin.ip ?? null,
    referralUrl: origin.referralUrl ?? null,
    ...(origin.topic ? { topic: origin.topic } : {}),
  };
}

export function withConsent(consent: Consent, category: ConsentCategory, status: boolean): Consent {
  return {
    outreach: consent.outreach,
    commercial: consent.commercial,
    blog: consent.blog,
    [category]: status,
  };
}

export function subscriptionOf(
  contact: Pick<Contact, 'subscriptions'>,
  appId: string,
): Subscription | undefined {
  return contact.subscriptions.find((subscription) => subscription.appId === appId);
}

/** The subscriptions with the one of `appId` replaced (or added). */
export function withSubscription(subscriptions: Subscription[], next: Subscription): Subscription[] {
  return [...subscriptions.filter((subscription) => subscription.appId !== next.appId), next];
}
