import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { ContactEvents, type ContactErasedEvent } from '../contact.events';
import { PublicSignups } from './public-signups.service';

/** GDPR delete: signups still waiting for the erased address's confirmation are dropped with it. */
@Injectable()
export class SignupConfirmationErasureListener {
  constructor(private readonly signups: PublicSignups) {}

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ email }: ContactErasedEvent): Promise<void> {
    await this.signups.forget(email);
  }
}
