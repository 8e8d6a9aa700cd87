import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { ContactEvents, type ContactErasedEvent } from '../contacts/contact.events';
import { Feedback } from './schemas/feedback.schema';

/**
 * GDPR delete of a person: the address they left with feedback (any app; stored lower-cased, as the event
 * carries it) becomes the placeholder, found through its index; what they wrote is not rewritten.
 */
@Injectable()
export class FeedbackErasureListener {
  constructor(@InjectModel(Feedback.name) private readonly feedback: Model<Feedback>) {}

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ email, placeholder }: ContactErasedEvent): Promise<void> {
    await this.feedback.updateMany({ email }, { $set: { email: placeholder } }, { timestamps: false }).exec();
  }
}
