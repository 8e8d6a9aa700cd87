import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { type NewsletterSignupEvent, SignupEvents } from '../contacts/signup.events';
import { type FeedbackCreatedEvent, FeedbackEvents } from '../feedback/feedback.events';
import { type TicketCreatedEvent, TicketEvents } from '../tickets/ticket.events';
import { type WantCreatedEvent, WantEvents, type WantStatusChangedEvent } from '../wants/want.events';
import { ChatNotifier } from './chat-notifier';

/**
 * Domain events → chat notifications. Each listener runs after the emitting request has moved on
 * (`async: true`: on a later turn of the event loop) and only stores the notice; delivery is the worker's.
 */
@Injectable()
export class ChatProducers {
  constructor(private readonly notifier: ChatNotifier) {}

  @OnEvent(TicketEvents.Created, { async: true })
  ticketCreated(event: TicketCreatedEvent): void {
    this.notifier.notify({
      appId: event.appId,
      channel: 'tickets',
      event: TicketEvents.Created,
      summary: 'New ticket',
      data: {
        ticketId: event.ticketId,
        subject: event.subject,
        email: event.email,
        priority: event.priority,
        topic: event.topic,
        shop: event.shopId ?? null,
        excerpt: event.excerpt,
      },
    });
  }

  @OnEvent(WantEvents.Created, { async: true })
  wantCreated(event: WantCreatedEvent): void {
    this.notifier.notify({
      appId: event.appId,
      channel: 'wants',
      event: WantEvents.Created,
      summary: 'New want',
      data: { wantId: event.wantId, title: event.title, category: event.category },
    });
  }

  @OnEvent(WantEvents.StatusChanged, { async: true })
  wantStatusChanged(event: WantStatusChangedEvent): void {
    this.notifier.notify({
      appId: event.appId,
      channel: 'wants',
      event: WantEvents.StatusChanged,
      summary: 'Want status changed',
      data: { wantId: event.wantId, title: event.title, from: event.from, to: event.to },
    });
  }

  @OnEvent(FeedbackEvents.Created, { async: true })
  feedbackCreated(event: FeedbackCreatedEvent): void {
    this.notifier.notify({
      appId: event.appId,
      channel: 'feedback',
      event: FeedbackEvents.Created,
      summary: 'New feedback',
      data: { feedbackId: event.feedbackId, type: event.type, subject: event.subject },
    });
  }

  @OnEvent(SignupEvents.NewsletterSignup, { async: true })
  newsletterSignup(event: NewsletterSignupEvent): void {
    this.notifier.notify({
      appId: event.appId,
      channel: 'newsletter',
      event: SignupEvents.NewsletterSignup,
      summary: 'New newsletter signup',
      data: {
        contactId: event.contactId,
        email: event.email,
        firstName: event.firstName,
        source: event.source,
        referralUrl: event.referralUrl,
      },
    });
  }
}
