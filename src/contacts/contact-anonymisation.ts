import escapeStringRegexp from 'escape-string-regexp';
import type { ConsentEvent, Contact, Subscription } from './schemas/contact.schema';

/** The actor of ledger events the person made themselves; an actor naming their address becomes this. */
export const SELF_ACTOR = 'self';
/** What replaces the person's address or names where they appear inside a kept text (a reason). */
export const ERASED_TEXT = '[erased]';
/** Names shorter than this are not searched for inside reasons: they would match ordinary words. */
const MIN_NAME_LENGTH = 2;

/**
 * The address that replaces a person's after a GDPR delete: unique per record (the address index is
 * unique), built from the record id alone so it reveals nothing of the address, and in the `.invalid`
 * top-level domain (RFC 2606), so no message can ever be delivered to it.
 */
export function erasedAddress(contactId: string): string {
  return `erased-${contactId}@erased.invalid`;
}

export type AnonymisedFields = Pick<
  Contact,
  'email' | 'firstName' | 'lastName' | 'locale' | 'tags' | 'consentHistory' | 'subscriptions' | 'deletedAt'
>;

/**
 * The record after a GDPR delete: address and names replaced, tags and locale cleared; the consent
 * history keeps what was decided, when, by what and for which app (category, status, source, appId,
 * time) without the person's IP, referral URL or address; subscriptions keep app, status and dates.
 * This is the only rewrite of ledger entries the service ever makes.
 */
export function anonymised(contact: Contact, now: Date): AnonymisedFields {
  const redact = redactor(contact);
  return {
    email: erasedAddress(String(contact._id)),
    firstName: null,
    lastName: null,
    locale: null,
    tags: [],
    consentHistory: contact.consentHistory.map(anonymisedEvent(contact, redact)),
    subscriptions: contact.subscriptions.map((subscription): Subscription => ({
      ...subscription,
      referralUrl: null,
    })),
    deletedAt: now,
  };
}

/**
 * One consent event without the person's data: what was decided, when, by what and for which app stays; the
 * IP and referral URL go, their address as actor becomes `self`, their address and names leave the reason.
 */
export function anonymisedEvent(
  contact: Contact,
  redact: (text: string) => string = redactor(contact),
): (event: ConsentEvent) => ConsentEvent {
  return (event) => ({
    ...(event._id ? { _id: event._id } : {}),
    category: event.category,
    status: event.status,
    reason: event.reason === null ? null : redact(event.reason),
    source: event.source,
    appId: event.appId,
    actor: event.actor.trim().toLowerCase() === contact.email ? SELF_ACTOR : event.actor,
    ip: null,
    referralUrl: null,
    at: event.at,
  });
}

/** Replaces the person's address and names (whole words in any script, any case) inside a text. */
function redactor(contact: Contact): (text: string) => string {
  const names = [contact.firstName, contact.lastName]
    .filter((name): name is string => typeof name === 'string' && name.trim().length >= MIN_NAME_LENGTH)
    .map((name) => `(?<![\\p{L}\\p{N}_])${escapeStringRegexp(name.trim())}(?![\\p{L}\\p{N}_])`);
  const pattern = new RegExp([escapeStringRegexp(contact.email), ...names].join('|'), 'giu');
  return (text) => text.replace(pattern, ERASED_TEXT);
}
