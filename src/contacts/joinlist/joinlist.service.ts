import { ForbiddenException, Injectable, Logger } from '@nestjs/common';
import { Types } from 'mongoose';
import type { App } from '../../apps/schemas/app.schema';
import { EmailService } from '../../email/email.service';
import type { EmailMessage } from '../../email/jobs/email-message';
import { EmailTemplatesService } from '../../email/templates/email-templates.service';
import { DEFAULT_LANGUAGE, type EmailTemplate } from '../../email/templates/schemas/email-template.schema';
import { LinkDomains } from '../../sender-domains/link-domains';
import type { Contact } from '../schemas/contact.schema';
import { PublicSignups } from '../signup/public-signups.service';
import { newSignupId, UnsubscribeLinks } from '../unsubscribe/unsubscribe-links';
import type { JoinlistDto, JoinlistResult } from './joinlist.dto';
import { builtInWelcome, WELCOME_TEMPLATE, welcomeVariables } from './welcome-email';

/** Transactional mail goes before campaign mail in the queue. */
const WELCOME_PRIORITY = 10;

/** How long after subscribing a repeated signup may still be the retry of one that failed midway. */
const WELCOME_RETRY_WINDOW_MS = 86_400_000;

const subscribedWithinRetryWindow = (contact: Contact, appId: string) => {
  const since = contact.subscriptions.find((subscription) => subscription.appId === appId)?.subscribedAt;
  return since !== undefined && Date.now() - since.getTime() < WELCOME_RETRY_WINDOW_MS;
};

export interface SignupContext {
  ip: string;
}

/**
 * The public newsletter signup of a web page (docs/architecture.md "Joinlist"): the person gets `blog`
 * consent and an active subscription to the app, a welcome e-mail (once per person and app), and the
 * `newsletter` chat channel hears of it; or, for someone who had said no (or everyone, on a double opt-in
 * app), a confirmation mail first (`PublicSignups`). The answer's `unsubscribeUrl` undoes only what the
 * request did: it names the subscription the request started, if any. A filled honeypot gets the same answer
 * and changes nothing. Every answer looks alike, whoever the address belongs to
 * (docs/decisions/security-public-answers.md): `alreadySubscribed` is always false and the link is sealed.
 */
@Injectable()
export class JoinlistService {
  private readonly logger = new Logger(JoinlistService.name);

  constructor(
    private readonly signups: PublicSignups,
    private readonly email: EmailService,
    private readonly templates: EmailTemplatesService,
    private readonly unsubscribeLinks: UnsubscribeLinks,
    private readonly linkDomains: LinkDomains,
  ) {}

  async join(app: App, dto: JoinlistDto, context: SignupContext): Promise<JoinlistResult> {
    if (dto.appId !== undefined && dto.appId !== app.id) {
      throw new ForbiddenException('appId does not match the app of X-App-Key');
    }
    if (dto.website) {
      this.logger.log(`Joinlist honeypot filled for app ${app.id}; nothing stored`);
      return this.answer(this.inertLink(app));
    }

    // The welcome template of a new person's language is read while the signup is decided (no round trip
    // of its own); a known person's stored language may ask for another one then.
    const welcome = this.prefetchWelcome(app, dto.locale ?? DEFAULT_LANGUAGE);
    const request = await this.signups.signUp(app, {
      appId: app.id,
      email: dto.email,
      firstName: dto.firstName,
      locale: dto.locale,
      source: dto.source ?? 'joinlist',
      referralUrl: dto.referralUrl ?? null,
      ip: context.ip,
    });
    switch (request.outcome) {
      case 'subscribed': {
        const contactId = String(request.contact._id);
        await this.enqueueWelcome(app, request.contact, welcome, request.created);
        return this.answer(
          this.unsubscribeLinks.signupAnswerUrl({ contactId, appId: app.id, signupId: request.signupId }),
        );
      }
      case 'already':
        // Enqueued on repeats within a day of subscribing too: the idempotency key makes a repeat a no-op,
        // and a signup whose first request failed after storing the person still gets its welcome on the
        // retry. Later repeats enqueue nothing: the first welcome's job, and with it its key, may have
        // expired (EMAIL_JOB_RETENTION_DAYS is at least one day).
        if (subscribedWithinRetryWindow(request.contact, app.id))
          await this.enqueueWelcome(app, request.contact, welcome, false);
        return this.answer(this.inertLink(app));
      case 'confirm':
        return this.answer(this.inertLink(app));
    }
  }

  /**
   * One shape for every outcome: whether the address was subscribed already, waits for its confirmation or
   * had said no is the person's business, not the business of whoever typed it in.
   */
  private answer(unsubscribeUrl: string): JoinlistResult {
    return { success: true, alreadySubscribed: false, unsubscribeUrl };
  }

  /**
   * The answer's link when the request started no subscription: shaped like any other, naming a person and a
   * signup that never were, so it unsubscribes no one (the person's own link is in the mails they receive).
   */
  private inertLink(app: App): string {
    const contactId = new Types.ObjectId().toHexString();
    return this.unsubscribeLinks.signupAnswerUrl({ contactId, appId: app.id, signupId: newSignupId() });
  }

  /** The app's `welcome` template in this language, being read; a failure surfaces where it is awaited. */
  private prefetchWelcome(app: App, language: string): PrefetchedTemplate {
    const template = this.templates.resolveForSending(app.id, WELCOME_TEMPLATE, language);
    // Not awaited when the signup needs no welcome: that rejection must not go unhandled.
    template.catch(() => undefined);
    return { language, template };
  }

  /**
   * The welcome, once per person and app; its unsubscribe link is the person's own (it goes to them). For a
   * person this request created, the welcome's key names a new record, so it cannot have been used.
   */
  private async enqueueWelcome(
    app: App,
    contact: Contact,
    prefetched: PrefetchedTemplate,
    personIsNew: boolean,
  ): Promise<void> {
    const contactId = String(contact._id);
    const unsubscribeUrl = this.unsubscribeLinks.url(
      { contactId, appId: app.id },
      await this.linkDomains.baseUrlOf(app.id),
    );
    await this.email.enqueueEmail(await this.welcomeMessage(app, contact, unsubscribeUrl, prefetched), {
      idempotencyKey: `welcome:${app.id}:${contactId}`,
      keyIsNew: personIsNew,
      priority: WELCOME_PRIORITY,
    });
  }

  /** The app's `welcome` template in the person's language when one exists, else the built-in text. */
  private async welcomeMessage(
    app: App,
    contact: Contact,
    unsubscribeUrl: string,
    prefetched: PrefetchedTemplate,
  ): Promise<EmailMessage> {
    const to = contact.email;
    const details = { to, appId: app.id, appName: app.name, firstName: contact.firstName, unsubscribeUrl };
    const language = contact.locale ?? DEFAULT_LANGUAGE;
    const template = await (language === prefetched.language
      ? prefetched.template
      : this.templates.resolveForSending(app.id, WELCOME_TEMPLATE, language));
    const base = { to, appId: app.id, unsubscribeUrl, contactId: String(contact._id) };
    if (template) {
      return {
        ...base,
        template: { name: WELCOME_TEMPLATE, language },
        variables: welcomeVariables(details),
      };
    }
    return { ...base, ...builtInWelcome(details) };
  }
}

interface PrefetchedTemplate {
  language: string;
  template: Promise<EmailTemplate | null>;
}
