import { Injectable, Logger } from '@nestjs/common';
import { isObjectIdOrHexString, Types } from 'mongoose';
import { ChatNotifier } from '../../chat/chat-notifier';
import { consentEvent, subscriptionOf, withConsent, withSubscription } from '../../contacts/contact-ledger';
import { ContactsService } from '../../contacts/contacts.service';
import type { Contact } from '../../contacts/schemas/contact.schema';
import type { SentMessageRecord } from '../jobs/sent-message-lookup';
import { SuppressionService } from '../suppression/suppression.service';
import type { BounceType } from '../tracking/schemas/email-event.schema';
import { EmailEventLedger } from './email-event-ledger';
import { PRIMARY_PROVIDER } from './provider-payload';
import { SoftBounceRule } from './soft-bounce-rule';

/** What a bounce or complaint is about. */
export interface ProtectiveEvent {
  type: 'bounced' | 'complained';
  bounceType?: BounceType;
  message: SentMessageRecord;
  messageId: string;
  /** The address: the job's, else the payload's `data.to`. */
  to: string | null;
  occurredAt: Date;
}

const SOURCE = 'webhook:primary';
const ACTOR = 'provider';

/**
 * What a bounce or a complaint does besides its event (docs/architecture.md "Suppression"): the address is
 * suppressed (a hard bounce: all mail; a complaint: broadcast mail, every app); the app's subscription
 * becomes `bounced` (a complaint: `unsubscribed`, with an `unsubscribed` event for the campaign), with a
 * consent-ledger event; the app's `email` chat channel is told. A soft bounce goes to the soft-bounce rule.
 * Each step is safe to repeat.
 */
@Injectable()
export class ProviderEffects {
  private readonly logger = new Logger(ProviderEffects.name);

  constructor(
    private readonly suppression: SuppressionService,
    private readonly contacts: ContactsService,
    private readonly chat: ChatNotifier,
    private readonly ledger: EmailEventLedger,
    private readonly softBounces: SoftBounceRule,
  ) {}

  async apply(event: ProtectiveEvent): Promise<void> {
    const { message, to } = event;
    if (event.type === 'bounced' && event.bounceType !== 'hard') {
      // A soft bounce alone suppresses nothing; enough of them in the address's latest messages do.
      if (to) await this.softBounces.check(to, message.appId);
      return;
    }
    if (!to) {
      this.logger.warn(`${event.type} of message ${event.messageId}: no address known, nothing suppressed`);
      return;
    }
    const complaint = event.type === 'complained';
    await this.suppression.suppress({
      email: to,
      reason: complaint ? 'complaint' : 'hard_bounce',
      source: SOURCE,
      appId: message.appId,
    });
    const person = await this.personOf(message, to);
    if (person && message.appId) {
      const left = complaint
        ? await this.contacts.unsubscribe(String(person._id), message.appId, {
            source: SOURCE,
            actor: ACTOR,
            reason: 'Complaint: the message was marked as spam',
          })
        : await this.markBounced(person, message.appId);
      if (left && complaint && message.campaignId) await this.recordUnsubscribed(event, String(person._id));
    }
    this.chat.notify({
      appId: message.appId ?? 'service',
      channel: 'email',
      event: complaint ? 'email.complained' : 'email.bounced',
      summary: complaint ? 'Spam complaint: address suppressed' : 'Hard bounce: address suppressed',
      data: {
        email: to,
        campaignId: message.campaignId,
        messageId: event.messageId,
        ...(complaint ? {} : { bounceType: 'hard' }),
      },
      key: `${event.type}:${event.messageId}`,
    });
  }

  private async personOf(message: SentMessageRecord, to: string): Promise<Contact | null> {
    if (message.contactId && isObjectIdOrHexString(message.contactId)) {
      return this.contacts.findById(message.contactId);
    }
    return to.endsWith('.invalid') ? null : this.contacts.findByEmail(to);
  }

  /** The app's active subscription becomes `bounced`; `blog` becomes false when no active one remains. */
  private async markBounced(person: Contact, appId: string): Promise<boolean> {
    if (person.deletedAt) return false;
    const { result } = await this.contacts.change(person, (current) => {
      const subscription = subscriptionOf(current, appId);
      if (!subscription || subscription.status !== 'active') return { change: null, result: false };
      const subscriptions = withSubscription(current.subscriptions, {
        ...subscription,
        status: 'bounced',
        unsubscribedAt: new Date(),
      });
      const blog = subscriptions.some((s) => s.status === 'active') ? current.consent.blog === true : false;
      return {
        change: {
          set: { subscriptions, consent: withConsent(current.consent, 'blog', blog) },
          events: [
            consentEvent('blog', blog, {
              source: SOURCE,
              actor: ACTOR,
              appId,
              reason: 'Hard bounce: the mailbox does not accept mail',
            }),
          ],
        },
        result: true,
      };
    });
    return result;
  }

  private async recordUnsubscribed(event: ProtectiveEvent, contactId: string): Promise<void> {
    await this.ledger.append([
      {
        _id: new Types.ObjectId(),
        appId: event.message.appId,
        contactId,
        messageId: event.messageId,
        campaignId: event.message.campaignId,
        stream: event.message.stream,
        provider: PRIMARY_PROVIDER,
        type: 'unsubscribed',
        userAgent: null,
        automated: false,
        createdAt: event.occurredAt,
      },
    ]);
  }
}
