import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { ContactEvents, type ContactErasedEvent } from '../../contacts/contact.events';
import { EmailEvent } from './schemas/email-event.schema';

/** One e-mail event as a person's data export shows it. */
export interface ExportedEmailEvent {
  type: string;
  provider: string;
  appId: string | null;
  campaignId: string | null;
  messageId: string | null;
  url: string | null;
  userAgent: string | null;
  createdAt: Date;
}

/** How many of a person's events an export lists (the newest). */
export const EXPORTED_EVENTS_MAX = 10_000;

/**
 * A person's e-mail events (opens, clicks, …): listed for a data export, and stripped of the user agent,
 * which describes the person's device, by a GDPR delete. The events themselves stay: campaign figures need
 * them, and they name the person only by the id of the anonymised record.
 */
@Injectable()
export class ContactEmailEvents {
  constructor(@InjectModel(EmailEvent.name) private readonly events: Model<EmailEvent>) {}

  async forContact(contactId: string): Promise<ExportedEmailEvent[]> {
    const found = await this.events
      .find({ contactId })
      .sort({ createdAt: -1 })
      .limit(EXPORTED_EVENTS_MAX)
      .lean<EmailEvent[]>()
      .exec();
    return found.map((event) => ({
      type: event.type,
      provider: event.provider,
      appId: event.appId,
      campaignId: event.campaignId,
      messageId: event.messageId,
      url: event.url ?? null,
      userAgent: event.userAgent,
      createdAt: event.createdAt,
    }));
  }

  /**
   * Which of `contactIds` had a human (not automated) event of `type` from this app's mail since `since`
   * (ever, within the events' retention, when null): a segment's engagement filter, one query per batch
   * of people, served by the `{contactId, appId, type, automated, createdAt}` index.
   */
  async engagedAmong(
    contactIds: string[],
    appId: string,
    type: 'opened' | 'clicked',
    since: Date | null,
  ): Promise<Set<string>> {
    if (contactIds.length === 0) return new Set();
    const found = await this.events
      .aggregate<{ _id: string }>([
        {
          $match: {
            contactId: { $in: contactIds },
            appId,
            type,
            automated: false,
            ...(since ? { createdAt: { $gte: since } } : {}),
          },
        },
        { $group: { _id: '$contactId' } },
      ])
      .exec();
    return new Set(found.map((row) => row._id));
  }

  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ contactId }: ContactErasedEvent): Promise<void> {
    await this.events.updateMany({ contactId }, { $set: { userAgent: null } }).exec();
  }
}
