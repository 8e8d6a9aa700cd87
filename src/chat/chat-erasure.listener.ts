import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { ContactEvents, type ContactErasedEvent } from '../contacts/contact.events';
import { ChatNotifier } from './chat-notifier';

/**
 * GDPR delete of a person: stored chat notifications (delivered or waiting) no longer name them; a waiting
 * one is delivered without the address and name. Lines already posted to a chat are outside the service.
 */
@Injectable()
export class ChatErasureListener {
  constructor(private readonly notifier: ChatNotifier) {}

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ email, placeholder }: ContactErasedEvent): Promise<void> {
    await this.notifier.scrubAddress(email, placeholder);
  }
}
