import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { isObjectIdOrHexString, Model, trusted } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import type { App } from '../../apps/schemas/app.schema';
import { isDuplicateKey } from '../../common/database/duplicate-key';
import { EmailService } from '../../email/email.service';
import { JobSecrets } from '../../email/jobs/job-secrets';
import { blockingCause } from '../../email/suppression/suppression-policy';
import { SuppressionService } from '../../email/suppression/suppression.service';
import { UndeliverableAddressException } from '../../email/suppression/undeliverable-address';
import { ContactsService, normaliseEmail, type SignUpInput, type SignUpRequest } from '../contacts.service';
import type { Contact } from '../schemas/contact.schema';
import { NewsletterSignupEvent, SignupEvents } from '../signup.events';
import { SIGNUP_CONFIRMATION_COMPOSER, SIGNUP_CONFIRMATION_SECRET } from './signup-confirmation-composer';
import { SignupConfirmationLinks } from './signup-confirmation-links';
import { SignupConfirmation } from './signup-confirmation.schema';

/**
 * How long a confirmation link works after it was first mailed: mailing it again does not extend it, so a
 * link never lives longer than this however often the address is submitted.
 */
const CONFIRMATION_LIFETIME_MS = 7 * 86_400_000;
/**
 * At most one confirmation mail per app and address in this time, however often the address is submitted:
 * a public form must not become a way to mail someone (who may have opted out) over and over.
 */
const REMAIL_AFTER_MS = 86_400_000;
/** Transactional mail goes before campaign mail in the queue. */
const CONFIRMATION_PRIORITY = 10;

/**
 * Signups anyone can send: the joinlist (publishable key) and an app backend's subscribe route (API key).
 * `ContactsService.requestSignUp` decides; a held-back signup is stored here and its confirmation link mailed
 * (docs/decisions/campaigns-joinlist-consent.md), and following that link is what subscribes the person. The
 * caller's answer is the same either way, so nobody learns who opted out.
 */
@Injectable()
export class PublicSignups {
  constructor(
    @InjectModel(SignupConfirmation.name) private readonly pending: Model<SignupConfirmation>,
    private readonly contacts: ContactsService,
    private readonly apps: AppsService,
    private readonly email: EmailService,
    private readonly suppression: SuppressionService,
    private readonly secrets: JobSecrets,
    private readonly links: SignupConfirmationLinks,
    private readonly events: EventEmitter2,
  ) {}

  /**
   * 422 for an address that hard-bounced: its confirmation or welcome mail could never arrive, and a
   * subscription of it would never be mailed (docs/decisions/api-suppressed-address-answers.md).
   */
  async signUp(app: App, input: SignUpInput): Promise<SignUpRequest> {
    const causes = await this.suppression.causes(input.email);
    if (causes && blockingCause(causes, 'transactional')) throw new UndeliverableAddressException();
    const request = await this.contacts.requestSignUp(input, {
      confirmEveryone: app.features?.doubleOptIn === true,
      suppressed: causes !== null,
    });
    if (request.outcome === 'confirm') await this.holdForConfirmation(app, input, request.contact);
    if (request.outcome === 'subscribed') this.announce(app.id, request.contact, input);
    return request;
  }

  /**
   * The confirmation link was followed (its POST): subscribes the person as the held-back signup asked,
   * with a consent event from the confirming request, and uses the link up. False for an unknown, expired
   * or used link, or an app switched off since.
   */
  async confirm(token: string, ip: string): Promise<boolean> {
    const id = this.links.read(token)?.id;
    if (!id || !isObjectIdOrHexString(id)) return false;
    const entry = await this.pending
      .findOne({ _id: id, expiresAt: trusted({ $gt: new Date() }) })
      .lean<SignupConfirmation>()
      .exec();
    if (!entry) return false;
    const app = await this.apps.findByAppId(entry.appId);
    if (!app?.active) return false;
    const input: SignUpInput = {
      appId: entry.appId,
      email: entry.email,
      firstName: entry.firstName ?? undefined,
      locale: entry.locale ?? undefined,
      source: entry.source,
      referralUrl: entry.referralUrl,
      ip,
      reason: 'Signup confirmed by e-mail',
    };
    // Subscribed before the entry goes: a second click meanwhile finds the subscription active (no change).
    const { contact, alreadySubscribed } = await this.contacts.signUp(input);
    await this.pending.deleteOne({ _id: entry._id }).exec();
    if (!alreadySubscribed) this.announce(app.id, contact, input);
    return true;
  }

  /** Forgets the held-back signups of an erased person's address. */
  async forget(email: string): Promise<void> {
    await this.pending.deleteMany({ email: normaliseEmail(email) }).exec();
  }

  /**
   * Stores the signup (or finds the one already waiting) and mails its link unless that was done within
   * REMAIL_AFTER_MS. The mail is transactional: the worker skips it for a suppressed address (recorded on
   * its job), so an opted-out, bounced or complaining address gets no mail and stays unsubscribed.
   */
  private async holdForConfirmation(app: App, input: SignUpInput, contact: Contact | null): Promise<void> {
    const now = new Date();
    let entry = await this.waiting(app.id, input);
    if (entry.expiresAt <= now) {
      // Past its lifetime and not yet removed by the database: a new signup, with a new link, replaces it.
      await this.pending.deleteOne({ _id: entry._id }).exec();
      entry = await this.waiting(app.id, input);
    }
    const previous = await this.pending
      .findOneAndUpdate(
        { _id: entry._id, mailedAt: trusted({ $lte: new Date(now.getTime() - REMAIL_AFTER_MS) }) },
        { $set: { mailedAt: now } },
      )
      .lean<SignupConfirmation>()
      .exec();
    if (!previous) return;
    // Composed when sent, its token sealed: the queue never holds a link that subscribes anyone.
    const message = {
      to: entry.email,
      appId: app.id,
      ...(contact ? { contactId: String(contact._id) } : {}),
      composer: SIGNUP_CONFIRMATION_COMPOSER,
      variables: { appName: app.name },
      sealed: this.secrets.seal({
        [SIGNUP_CONFIRMATION_SECRET]: this.links.token(String(entry._id), app.id),
      }),
    };
    try {
      await this.email.enqueueEmail(message, {
        idempotencyKey: `signup-confirm:${String(entry._id)}:${now.getTime()}`,
        priority: CONFIRMATION_PRIORITY,
      });
    } catch (error) {
      // Not mailed after all: the next request may mail it.
      await this.pending
        .updateOne({ _id: entry._id, mailedAt: now }, { $set: { mailedAt: previous.mailedAt } })
        .exec();
      throw error;
    }
  }

  /**
   * The app's waiting signup of this address, stored now when there is none. The first request's details
   * stay: a later one, by anyone, cannot change what the person is asked to confirm.
   */
  private async waiting(appId: string, input: SignUpInput): Promise<SignupConfirmation> {
    const filter = { appId, email: normaliseEmail(input.email) };
    try {
      return await this.pending
        .findOneAndUpdate(
          filter,
          {
            $setOnInsert: {
              firstName: input.firstName ?? null,
              locale: input.locale ?? null,
              source: input.source,
              referralUrl: input.referralUrl ?? null,
              mailedAt: new Date(0),
              expiresAt: new Date(Date.now() + CONFIRMATION_LIFETIME_MS),
            },
          },
          { upsert: true, returnDocument: 'after', setDefaultsOnInsert: true },
        )
        .lean<SignupConfirmation>()
        .orFail()
        .exec();
    } catch (error) {
      // Two first requests at once: one insert wins, the other reads it.
      if (!isDuplicateKey(error)) throw error;
      return this.pending.findOne(filter).lean<SignupConfirmation>().orFail().exec();
    }
  }

  private announce(appId: string, contact: Contact, input: SignUpInput): void {
    this.events.emit(
      SignupEvents.NewsletterSignup,
      new NewsletterSignupEvent(
        appId,
        String(contact._id),
        contact.email,
        contact.firstName,
        input.source,
        input.referralUrl ?? null,
      ),
    );
  }
}
