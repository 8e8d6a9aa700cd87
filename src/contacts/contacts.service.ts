import { BadRequestException, ConflictException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model, type QueryFilter, Types } from 'mongoose';
import { isDuplicateKey } from '../common/database/duplicate-key';
import { emailAddressMessage, isSendableAddress } from '../common/validation/email-address';
import { SuppressionService } from '../email/suppression/suppression.service';
import {
  type ChangeOrigin,
  type ContactChange,
  consentEvent,
  subscriptionOf,
  withConsent,
  withSubscription,
} from './contact-ledger';
import { type AudienceCriteria, audienceFilter } from './audience-criteria';
import { ConsentArchive, leavingWindow } from './consent-archive';
import { CONSENT_HISTORY_WINDOW, type ConsentEvent, Contact, type Locale } from './schemas/contact.schema';
import { newSignupId } from './unsubscribe/unsubscribe-links';

/** The 409 of a change that lost every attempt to concurrent changes of the same person. */
export const CONTACT_BUSY = 'The contact is being changed by other requests; try again';

/** Attempts of one change against concurrent changes to the same person before giving up (409). */
const MAX_CHANGE_ATTEMPTS = 10;

export interface SignUpInput {
  appId: string;
  email: string;
  firstName?: string;
  locale?: Locale;
  source: string;
  referralUrl?: string | null;
  ip?: string | null;
  /** The ledger event's reason; `Signed up` by default. */
  reason?: string;
}

/** A person as an end-user token names them: whether they still exist, and their token version. */
export type TokenSubject = Pick<Contact, '_id' | 'deletedAt'> & Partial<Pick<Contact, 'tokenVersion'>>;

export interface SignUpResult {
  contact: Contact;
  /** The app's subscription was already active before this signup. */
  alreadySubscribed: boolean;
  /** The `signupId` of the subscription this signup started; null when it was already active. */
  signupId: string | null;
}

/** What a public signup did: subscribed at once, nothing (already active), or nothing until confirmed. */
export type SignUpRequest =
  /** `created`: the person's record was created by this signup. */
  | { outcome: 'subscribed'; contact: Contact; signupId: string; created: boolean }
  | { outcome: 'already'; contact: Contact }
  | { outcome: 'confirm'; contact: Contact | null };

/** One recipient of a campaign, as the campaign planner needs it. */
export interface AudienceMember {
  _id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/**
 * The address a person record is kept under. Refused before anything is written: an address that breaks
 * the address rule (every route checks it, this keeps any other caller from storing one), and `.invalid`
 * (RFC 2606), which never receives mail and holds the placeholders of erased records: refusing it keeps
 * anyone from reaching an erased record by its placeholder.
 */
function personAddress(email: string): string {
  const address = normaliseEmail(email);
  if (!isSendableAddress(address)) throw new BadRequestException(emailAddressMessage('email'));
  if (address.endsWith('.invalid')) {
    throw new BadRequestException('email: addresses under .invalid cannot receive mail');
  }
  return address;
}

/**
 * The person record (docs/architecture.md "People"): one per address across apps. Every change goes through
 * `change`, which applies a decision to the revision it was made on, so concurrent changes retry instead of
 * overwriting each other, and appends to the consent ledger without ever rewriting it.
 */
@Injectable()
export class ContactsService {
  constructor(
    @InjectModel(Contact.name) private readonly contacts: Model<Contact>,
    private readonly suppression: SuppressionService,
    private readonly consentArchive: ConsentArchive,
  ) {}

  /**
   * An app's campaign audience (docs/architecture.md "Who gets what": an active subscription to the app,
   * `blog` consent not false, not erased), narrowed by `criteria` (a segment, a campaign's topic), in `_id`
   * order after `afterId`, in batches of `batchSize`: the planner walks the audience with this, so memory
   * stays flat and a resumed plan continues where it stopped. One database cursor serves every batch: a
   * query per batch would make the dev database (which has no index for this filter) scan and sort the
   * whole collection once per batch, quadratic in the audience's size. Suppression is the caller's to check
   * (it is the e-mail engine's list).
   */
  async *audience(
    appId: string,
    afterId: string | null,
    batchSize: number,
    criteria: AudienceCriteria = {},
  ): AsyncGenerator<AudienceMember[]> {
    const cursor = this.contacts
      .find(audienceFilter(appId, criteria, afterId), { email: 1, firstName: 1, lastName: 1 })
      .sort({ _id: 1 })
      .lean<Pick<Contact, '_id' | 'email' | 'firstName' | 'lastName'>>()
      .cursor({ batchSize });
    try {
      let batch: AudienceMember[] = [];
      for await (const doc of cursor) {
        batch.push({
          _id: String(doc._id),
          email: doc.email,
          firstName: doc.firstName ?? null,
          lastName: doc.lastName ?? null,
        });
        if (batch.length === batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      // Also when the caller stops early (a failed batch): the server-side cursor is released at once.
      await cursor.close();
    }
  }

  /**
   * What an end-user token is checked against on every request that carries one: one read by `_id` (the
   * primary key) with two small fields, null for an id that cannot be a record's.
   */
  findTokenSubject(id: string): Promise<TokenSubject | null> {
    if (!isObjectIdOrHexString(id)) return Promise.resolve(null);
    return this.contacts.findById(id, { tokenVersion: 1, deletedAt: 1 }).lean<TokenSubject>().exec();
  }

  findById(id: string): Promise<Contact | null> {
    return this.contacts.findById(id).lean<Contact>().exec();
  }

  /** A live (not erased) person by address. */
  findByEmail(email: string): Promise<Contact | null> {
    return this.contacts
      .findOne({ email: normaliseEmail(email), deletedAt: null })
      .lean<Contact>()
      .exec();
  }

  /** The person with this address, created (with no consent given) when there is none. */
  async findOrCreate(email: string): Promise<Contact> {
    const address = personAddress(email);
    try {
      return await this.contacts
        .findOneAndUpdate(
          { email: address },
          { $setOnInsert: { email: address } },
          { upsert: true, returnDocument: 'after', setDefaultsOnInsert: true },
        )
        .lean<Contact>()
        .orFail()
        .exec();
    } catch (error) {
      // Two first signups of one address at once: one insert wins, the other reads its record.
      if (!isDuplicateKey(error)) throw error;
      return this.contacts.findOne({ email: address }).lean<Contact>().orFail().exec();
    }
  }

  /**
   * A signup whose consent is established (the person followed their confirmation link): `blog` consent
   * and an active subscription to the app with a new `signupId`, with a ledger event when either changes,
   * and an opt-out suppression lifted. Signing up again while active changes nothing (`alreadySubscribed`).
   * Public routes go through `requestSignUp` instead.
   */
  async signUp(input: SignUpInput): Promise<SignUpResult> {
    const signupId = newSignupId();
    const { contact, result } = await this.changeByEmail(input.email, (current) =>
      subscribing(current, input, signupId),
    );
    if (result.consentGiven) await this.suppression.liftOptOut(contact.email);
    return { contact, alreadySubscribed: result.wasActive, signupId: result.wasActive ? null : signupId };
  }

  /**
   * A signup from a public form or an app backend, which anyone can send with anyone's address
   * (docs/decisions/campaigns-joinlist-consent.md). It never overrides the person's own "no": someone who
   * unsubscribed from the app, withdrew `blog` consent or is on the suppression list (opt-out, bounce,
   * complaint) must confirm by e-mail first (`confirm`), and so must everyone new when `confirmEveryone` (the
   * app's `features.doubleOptIn`). A person with no record who must confirm gets none: nothing is stored for
   * an unconfirmed address here. `suppressed`: the caller has read the suppression list already.
   */
  async requestSignUp(
    input: SignUpInput,
    policy: { confirmEveryone: boolean; suppressed?: boolean },
  ): Promise<SignUpRequest> {
    const signupId = newSignupId();
    const decide = (suppressed: boolean) => (current: Contact) => {
      const subscription = subscriptionOf(current, input.appId);
      if (subscription?.status === 'active' && current.consent.blog !== false) {
        return { change: null, result: 'already' as const };
      }
      if (policy.confirmEveryone || suppressed || current.consent.blog === false || subscription) {
        return { change: null, result: 'confirm' as const };
      }
      return { change: subscribing(current, input, signupId).change, result: 'subscribed' as const };
    };
    const answer = ({ contact, result, created }: { contact: Contact; result: string; created?: boolean }) =>
      result === 'subscribed'
        ? { outcome: 'subscribed' as const, contact, signupId, created: created === true }
        : { outcome: result as 'already' | 'confirm', contact };

    if (!policy.confirmEveryone) {
      const suppressed = policy.suppressed ?? (await this.suppression.isSuppressed(input.email));
      // Anyone not suppressed may be stored: a first signup is one insert carrying its consent event, and
      // someone already known is decided on their record (changeByEmail).
      if (!suppressed) return answer(await this.changeByEmail(input.email, decide(false)));
      const existing = await this.findByEmail(input.email);
      return existing
        ? answer(await this.change(existing, decide(true)))
        : { outcome: 'confirm', contact: null };
    }
    const [existing, suppressed] = await Promise.all([
      this.findByEmail(input.email),
      policy.suppressed ?? this.suppression.isSuppressed(input.email),
    ]);
    if (!existing) return { outcome: 'confirm', contact: null };
    return answer(await this.change(existing, decide(suppressed)));
  }

  /**
   * The person leaves one app's newsletter: that subscription becomes `unsubscribed` with a ledger event,
   * and `blog` becomes false when no active subscription remains. With `signupId` (the link of a signup's
   * answer), only while the subscription is still the one that signup started. False when there was
   * nothing to change.
   */
  async unsubscribe(
    contactId: string,
    appId: string,
    origin: ChangeOrigin,
    signupId?: string,
  ): Promise<boolean> {
    const start = isObjectIdOrHexString(contactId) ? await this.findById(contactId) : null;
    if (!start || start.deletedAt) return false;
    const { result } = await this.change(start, (current) => {
      const subscription = subscriptionOf(current, appId);
      if (!subscription || subscription.status !== 'active') return { change: null, result: false };
      if (signupId !== undefined && subscription.signupId !== signupId) {
        return { change: null, result: false };
      }
      const subscriptions = withSubscription(current.subscriptions, {
        ...subscription,
        status: 'unsubscribed',
        unsubscribedAt: new Date(),
      });
      const stillSubscribed = subscriptions.some((s) => s.status === 'active');
      const blog = stillSubscribed ? current.consent.blog === true : false;
      return {
        change: {
          set: { subscriptions, consent: withConsent(current.consent, 'blog', blog) },
          events: [
            consentEvent('blog', blog, {
              ...origin,
              appId,
              reason: origin.reason ?? `Unsubscribed from ${appId}`,
            }),
          ],
        },
        result: true,
      };
    });
    return result;
  }

  /**
   * `change` for the person with this address, created by the change when there is none. A first signup
   * (the common case) costs one insert; an existing person costs the refused insert, a read and the update.
   */
  async changeByEmail<R>(
    email: string,
    decide: (current: Contact) => { change: ContactChange | null; result: R },
  ): Promise<{ contact: Contact; result: R; created: boolean }> {
    const blank = new this.contacts({ email: personAddress(email) }).toObject<Contact>();
    const { change, result } = decide(blank);
    if (!change) return { ...(await this.change(await this.findOrCreate(email), decide)), created: false };
    try {
      const now = new Date();
      const created = await this.contacts.create({
        ...blank,
        ...change.set,
        consentHistory: stamped(change.events, now),
      });
      return { contact: created.toObject<Contact>(), result, created: true };
    } catch (error) {
      // Someone holds this address already (or just inserted it): change their record instead.
      if (!isDuplicateKey(error)) throw error;
      const existing = await this.contacts.findOne({ email: blank.email }).lean<Contact>().orFail().exec();
      return { ...(await this.change(existing, decide)), created: false };
    }
  }

  /**
   * Applies `decide` to the person as stored now. `decide` sees the current record and returns the change
   * (null: nothing to do) and a result; when another change landed in between, it runs again on the new
   * record. Returns the record after the change.
   */
  async change<R>(
    start: Contact,
    decide: (current: Contact) => { change: ContactChange | null; result: R },
  ): Promise<{ contact: Contact; result: R }> {
    let current = start;
    for (let attempt = 1; attempt <= MAX_CHANGE_ATTEMPTS; attempt++) {
      const { change, result } = decide(current);
      if (!change || (isEmpty(change.set) && !change.events?.length)) return { contact: current, result };
      const filter: QueryFilter<Contact> = { _id: current._id, revision: current.revision };
      const events = stamped(change.events, new Date());
      // Archived before the contact is written, so no crash between the two loses them (ConsentArchive).
      await this.consentArchive.archive(
        current._id,
        leavingWindow(current.consentHistory ?? [], events.length),
      );
      const update = {
        $set: { ...change.set },
        $inc: { revision: 1 },
        ...(events.length
          ? { $push: { consentHistory: { $each: events, $slice: -CONSENT_HISTORY_WINDOW } } }
          : {}),
      };
      const updated = await this.contacts
        .findOneAndUpdate(filter, update, { returnDocument: 'after', runValidators: true })
        .lean<Contact>()
        .exec();
      if (updated) return { contact: updated, result };
      const reread = await this.findById(String(current._id));
      if (!reread) throw new ConflictException('The contact was removed during the change');
      current = reread;
    }
    throw new ConflictException(CONTACT_BUSY);
  }
}

const isEmpty = (set: object | undefined) => !set || Object.keys(set).length === 0;

/** A change's events as stored: each with its id (its key in the archive too) and the change's time. */
const stamped = (events: ContactChange['events'], at: Date): ConsentEvent[] =>
  (events ?? []).map((event) => ({ _id: new Types.ObjectId(), ...event, at }));

/**
 * The change that subscribes `current` to the app with consent: a new active subscription (unless one is
 * active) and a `blog` consent event when consent is newly given to this app. Names and locale are only
 * filled in where the person has none: a signup, which anyone can send, never renames someone.
 */
function subscribing(current: Contact, input: SignUpInput, signupId: string) {
  const subscription = subscriptionOf(current, input.appId);
  const wasActive = subscription?.status === 'active';
  const set: ContactChange['set'] = {};
  if (input.firstName !== undefined && !current.firstName) set.firstName = input.firstName;
  if (input.locale !== undefined && !current.locale) set.locale = input.locale;
  const events = [];
  if (!wasActive) {
    set.subscriptions = withSubscription(current.subscriptions, {
      appId: input.appId,
      status: 'active',
      source: input.source,
      referralUrl: input.referralUrl ?? null,
      subscribedAt: new Date(),
      unsubscribedAt: null,
      signupId,
    });
  }
  // A new subscription is consent given to this app, recorded even when `blog` was already true.
  const consentGiven = !wasActive || current.consent.blog !== true;
  if (consentGiven) {
    set.consent = withConsent(current.consent, 'blog', true);
    events.push(
      consentEvent('blog', true, {
        source: input.source,
        actor: 'self',
        appId: input.appId,
        ip: input.ip,
        referralUrl: input.referralUrl,
        reason: input.reason ?? 'Signed up',
      }),
    );
  }
  return { change: { set, events }, result: { wasActive, consentGiven } };
}
