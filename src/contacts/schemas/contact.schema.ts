import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Types } from 'mongoose';

export const CONSENT_CATEGORIES = ['outreach', 'commercial', 'blog'] as const;
export type ConsentCategory = (typeof CONSENT_CATEGORIES)[number];

export const LOCALES = ['en', 'es', 'fr', 'de', 'it', 'pt'] as const;
export type Locale = (typeof LOCALES)[number];

export const SUBSCRIPTION_STATUSES = ['active', 'unsubscribed', 'bounced'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const NAME_MAX = 100;
export const TAG_MAX = 50;
export const REASON_MAX = 500;
export const SOURCE_MAX = 50;
export const REFERRAL_URL_MAX = 2_000;

/**
 * Consent per category: `true` given, `false` refused or withdrawn, `null` never asked. Campaigns go to
 * people whose `blog` consent is not `false` (docs/architecture.md "Who gets what").
 */
@Schema({ _id: false })
export class Consent {
  @Prop({ type: Boolean, default: null }) outreach: boolean | null;
  @Prop({ type: Boolean, default: null }) commercial: boolean | null;
  @Prop({ type: Boolean, default: null }) blog: boolean | null;
}
const ConsentSchema = SchemaFactory.createForClass(Consent);

/**
 * The consent events a contact document holds: the newest ones. Older events live in
 * `contact_consent_events` (ConsentArchive), so a person whose consent changes without end (a public
 * joinlist and an unsubscribe link can cycle it) keeps a document of bounded size: at most this many
 * events of at most about 12 KB each in the worst encoding (docs/operations/data-retention.md).
 */
export const CONSENT_HISTORY_WINDOW = 50;

/**
 * One entry of the consent ledger. Entries are only ever appended ($push, see ContactsService.change); the
 * one exception is a GDPR delete, which replaces their personal data (actor, IP, referral URL) by
 * placeholders.
 */
@Schema({ _id: false })
export class ConsentEvent {
  /** The event's id, also its `_id` in the archive (absent on events recorded before the archive existed). */
  @Prop({ type: Types.ObjectId }) _id?: Types.ObjectId;
  @Prop({ type: String, enum: CONSENT_CATEGORIES, required: true }) category: ConsentCategory;
  /** A newsletter topic of the app (`blog` events only): the person kept (`true`) or dropped it. */
  @Prop({ type: String, default: null }) topic?: string | null;
  /** The category's consent after this event. */
  @Prop({ required: true }) status: boolean;
  @Prop({ type: String, default: null }) reason: string | null;
  /** What recorded it: `admin`, `joinlist`, `unsubscribe`, `api`, `import`, … */
  @Prop({ required: true }) source: string;
  @Prop({ type: String, default: null }) appId: string | null;
  /** Who: an admin user's e-mail, `self` for the person, `system` for the service. */
  @Prop({ required: true }) actor: string;
  @Prop({ type: String, default: null }) ip: string | null;
  @Prop({ type: String, default: null }) referralUrl: string | null;
  @Prop({ required: true }) at: Date;
}
const ConsentEventSchema = SchemaFactory.createForClass(ConsentEvent);

/** The person's newsletter subscription to one app (the newsletter's subscriber view reads these). */
@Schema({ _id: false })
export class Subscription {
  @Prop({ required: true }) appId: string;
  @Prop({ type: String, enum: SUBSCRIPTION_STATUSES, required: true }) status: SubscriptionStatus;
  @Prop({ required: true }) source: string;
  @Prop({ type: String, default: null }) referralUrl: string | null;
  @Prop({ required: true }) subscribedAt: Date;
  @Prop({ type: Date, default: null }) unsubscribedAt: Date | null;
  /**
   * A random id given to the subscription by the signup that started it: the unsubscribe link of that
   * signup's answer names it, so the link ends this subscription and no later one (absent on subscriptions
   * that no signup started: admin, import).
   */
  @Prop({ type: String, default: null }) signupId?: string | null;
  /** The app's newsletter topics the person dropped on the preference page: campaigns of these skip them. */
  @Prop({ type: [String], default: [] }) droppedTopics?: string[];
}
const SubscriptionSchema = SchemaFactory.createForClass(Subscription);

/**
 * A person: one record per lower-cased e-mail address across all apps (docs/architecture.md "People").
 * Contacts and newsletter subscribers are two views of it.
 */
@Schema({ collection: 'contacts', timestamps: true, minimize: false })
export class Contact {
  _id: Types.ObjectId;
  /** Lower-cased and trimmed; a placeholder after a GDPR delete. */
  @Prop({ required: true }) email: string;
  @Prop({ type: String, default: null }) firstName: string | null;
  @Prop({ type: String, default: null }) lastName: string | null;
  @Prop({ type: String, enum: LOCALES, default: null }) locale: Locale | null;
  @Prop({ type: [String], default: [] }) tags: string[];
  @Prop({ type: ConsentSchema, default: () => ({}) }) consent: Consent;
  /** The newest CONSENT_HISTORY_WINDOW events, oldest first; the older ones are archived. */
  @Prop({ type: [ConsentEventSchema], default: [] }) consentHistory: ConsentEvent[];
  @Prop({ type: [SubscriptionSchema], default: [] }) subscriptions: Subscription[];
  /** Set by a GDPR delete: the record is then anonymised and kept only for its consent ledger. */
  @Prop({ type: Date, default: null }) deletedAt: Date | null;
  /**
   * Bumped by every change; a change applies only to the revision it read (optimistic concurrency), so two
   * simultaneous changes to one person never lose an event or a subscription.
   */
  @Prop({ default: 0 }) revision: number;
  /**
   * The version end-user (magic-link) tokens carry; a GDPR delete bumps it, so every token issued before is
   * refused on its next request. Absent on records older than the field: read as 0.
   */
  @Prop({ default: 0 }) tokenVersion: number;
  /**
   * Set when a GDPR delete starts, removed when it ends (with `deletedAt`): an erasure that a failure or a
   * killed process left half done is finished by ContactErasureSweep, with the admin who asked for it.
   */
  @Prop() erasureStartedAt?: Date;
  @Prop() erasureActor?: string;

  createdAt: Date;
  updatedAt: Date;
}

export const ContactSchema = SchemaFactory.createForClass(Contact);
// One person per address (upserts by address race safely on it).
ContactSchema.index({ email: 1 }, { unique: true });
// The admin list: live records newest first, optionally by tag (multikey); `_id` is the page's tie-breaker.
ContactSchema.index({ deletedAt: 1, createdAt: -1, _id: -1 });
ContactSchema.index({ tags: 1, deletedAt: 1, createdAt: -1, _id: -1 });
// A campaign's audience in `_id` order (ContactsService.audience), and the subscriber counts by status.
// The fields after `_id` are the segment and topic filters (docs/api/newsletters.md "Segments"), checked
// on the keys while the walk goes through the app's subscribers in `_id` order.
ContactSchema.index({
  'subscriptions.appId': 1,
  'subscriptions.status': 1,
  deletedAt: 1,
  _id: 1,
  'consent.blog': 1,
  'subscriptions.droppedTopics': 1,
  'subscriptions.subscribedAt': 1,
  'subscriptions.source': 1,
  locale: 1,
});
// The newsletter's subscriber list: one app's live subscribers newest first.
ContactSchema.index({ 'subscriptions.appId': 1, deletedAt: 1, createdAt: -1, _id: -1 });
// The same list by subscription status: `$elemMatch` on appId and status bounds both multikey fields.
ContactSchema.index({
  'subscriptions.appId': 1,
  'subscriptions.status': 1,
  deletedAt: 1,
  createdAt: -1,
  _id: -1,
});
// The admin list by consent category (ContactsAdminService.list `category`, `categoryStatus`), newest first.
for (const category of CONSENT_CATEGORIES) {
  ContactSchema.index({ [`consent.${category}`]: 1, deletedAt: 1, createdAt: -1, _id: -1 });
}
// ContactErasureSweep: the erasures started long enough ago that they must have been interrupted (only
// records with an erasure under way are in it).
ContactSchema.index(
  { erasureStartedAt: 1 },
  { partialFilterExpression: { erasureStartedAt: { $exists: true } } },
);
