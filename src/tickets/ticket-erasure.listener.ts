import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { ContactEvents, type ContactErasedEvent } from '../contacts/contact.events';
import { Ticket } from './schemas/ticket.schema';

/**
 * GDPR delete of a person (docs/architecture.md "GDPR delete"): their address leaves every ticket of every
 * app, as the customer and as the author of thread messages (whose author name goes too). What they wrote
 * (subject, messages, attachments) is not rewritten. Addresses are stored lower-cased, as the event carries
 * them, and each field has an index of its own (an erasure reads only the person's tickets).
 */
@Injectable()
export class TicketErasureListener {
  constructor(@InjectModel(Ticket.name) private readonly tickets: Model<Ticket>) {}

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ email, placeholder }: ContactErasedEvent): Promise<void> {
    await this.tickets.updateMany({ email }, { $set: { email: placeholder } }, { timestamps: false }).exec();
    await this.tickets
      .updateMany(
        { 'messages.authorEmail': email },
        {
          $set: { 'messages.$[mine].authorEmail': placeholder },
          $unset: { 'messages.$[mine].authorName': '' },
        },
        { arrayFilters: [{ 'mine.authorEmail': email }], timestamps: false },
      )
      .exec();
  }
}
