import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { ContactEvents, type ContactErasedEvent } from '../contacts/contact.events';
import { Want } from './schemas/want.schema';

/**
 * GDPR delete of a person: the author address of their wants (any app; stored lower-cased, as the event
 * carries it) becomes the placeholder, found through its index;
 * titles and descriptions are not rewritten. Votes name an end-user id or an IP, not an address.
 */
@Injectable()
export class WantErasureListener {
  constructor(@InjectModel(Want.name) private readonly wants: Model<Want>) {}

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ email, placeholder }: ContactErasedEvent): Promise<void> {
    await this.wants
      .updateMany({ authorEmail: email }, { $set: { authorEmail: placeholder } }, { timestamps: false })
      .exec();
  }
}
