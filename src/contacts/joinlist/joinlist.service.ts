import { ForbiddenException, Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Types } from 'mongoose';
import type { App } from '../../apps/schemas/app.schema';
import { EmailService } from '../../email/email.service';
import type { EmailMessage } from '../../email/jobs/email-message';
import { EmailTemplatesService } from '../../email/templates/email-templates.service';
import { DEFAULT_LANGUAGE } from '../../email/templates/schemas/email-template.schema';
import { ContactsService } from '../contacts.service';
import type { Contact } from '../schemas/contact.schema';
import { NewsletterSignupEvent, SignupEvents } from '../signup.events';
import { UnsubscribeLinks } from '../unsubscribe/unsubscribe-links';
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
 * The public newsletter signup of a web page (DESIGN "Joinlist"): the person gets `blog` consent and an
 * active subscription to the app, a welcome e-mail (once per person and app), and the `newsletter` chat
 * channel hears of it. A filled honeypot gets the same answer and changes nothing.
 */
@Injectable()
export class JoinlistService {
  private readonly logger = new Logger(JoinlistService.name);

  constructor(
    private readonly contacts: ContactsService,
    private readonly email: EmailService,
    private readonly templates: EmailTemplatesService,
    private readonly unsubscribeLinks: UnsubscribeLinks,
    private readonly events: EventEmitter2,
  ) {}

  async join(app: App, dto: JoinlistDto, context: SignupContext): Promise<JoinlistResult> {
    if (dto.appId !== undefined && dto.appId !== app.id) {
      throw new ForbiddenException('appId does not match the app of X-App-Key');
    }
    if (dto.website) {
      this.logger.log(`Joinlist honeypot filled for app ${app.id}; nothing stored`);
      // A link that looks like any other and unsubscribes no one (the page is the same for every token).
      const decoy = this.unsubscribeLinks.url({
        contactId: new Types.ObjectId().toHexString(),
        appId: app.id,
      });
      return { success: true, alreadySubscribed: false, unsubscribeUrl: decoy };
    }

    const source = dto.source ?? 'joinlist';
    const { contact, alreadySubscribed } = await this.contacts.signUp({
      appId: app.id,
      email: dto.email,
      firstName: dto.firstName,
      locale: dto.locale,
      source,
      referralUrl: dto.referralUrl ?? null,
      ip: context.ip,
    });
    const contactId = String(contact._id);
    const unsubscribeUrl = this.unsubscribeLinks.url({ contactId, appId: app.id });

    // Enqueued on a new subscription and on repeats within a day of it, not only the first request: the
    // idempotency key makes a repeat a no-op, and a signup whose first request failed after storing the
    // person still gets its welcome on the retry. Later repeats enqueue nothing: the first welcome's job,
    // and with it its key, may have expired (EMAIL_JOB_RETENTION_DAYS is at least one day).
    if (!alreadySubscribed || subscribedWithinRetryWindow(contact, app.id)) {
      await this.email.enqueueEmail(await this.welcomeMessage(app, contact, unsubscribeUrl), {
        idempotencyKey: `welcome:${app.id}:${contactId}`,
        priority: WELCOME_PRIORITY,
      });
    }
    if (!alreadySubscribed) {
      this.events.emit(
        SignupEvents.NewsletterSignup,
        new NewsletterSignupEvent(
          app.id,
          contactId,
          contact.email,
          contact.firstName,
          source,
          dto.referralUrl ?? null,
        ),
      );
    }
    return { success: true, alreadySubscribed, unsubscribeUrl };
  }

  /** The app's `welcome` template in the person's language when one exists, else the built-in text. */
  private async welcomeMessage(app: App, contact: Contact, unsubscribeUrl: string): Promise<EmailMessage> {
    const to = contact.email;
    const details = { to, appId: app.id, appName: app.name, firstName: contact.firstName, unsubscribeUrl };
    const language = contact.locale ?? DEFAULT_LANGUAGE;
    const template = await this.templates.resolveForSending(app.id, WELCOME_TEMPLATE, language);
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
