import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { createHash } from 'node:crypto';
import type { AnyBulkWriteOperation } from 'mongodb';
import { Model, Types } from 'mongoose';
import { ArchivedConsentEvent } from './schemas/archived-consent-event.schema';
import { CONSENT_HISTORY_WINDOW, type ConsentEvent, type Contact } from './schemas/contact.schema';
import { writeAll } from '../common/database/bulk-writes';

/**
 * An event's archive id: its own, or for an event recorded before events had ids, one derived from the
 * contact and what the event says (stable, so archiving it again writes the same entry).
 */
export function consentEventIdOf(contactId: Types.ObjectId, event: ConsentEvent): Types.ObjectId {
  if (event._id) return event._id;
  const digest = createHash('sha256')
    .update(
      JSON.stringify([
        String(contactId),
        new Date(event.at).getTime(),
        event.category,
        event.status,
        event.source,
        event.actor,
        event.appId,
      ]),
    )
    .digest();
  return new Types.ObjectId(digest.subarray(0, 12));
}

/** The events a change pushes out of the contact's window (the oldest ones beyond CONSENT_HISTORY_WINDOW). */
export function leavingWindow(history: ConsentEvent[], added: number): ConsentEvent[] {
  return history.slice(0, Math.max(0, history.length + added - CONSENT_HISTORY_WINDOW));
}

/**
 * The consent events older than a contact's window (`contact_consent_events`). A change archives the events
 * it is about to push out of the window *before* it writes the contact: those events are already stored,
 * so a crash between the two writes loses nothing (the next change archives them again, by the same ids),
 * and a change that loses its revision race has archived nothing untrue. A contact stored before the
 * archive existed, with a long embedded history, is moved the same way by its next change (lazily).
 */
@Injectable()
export class ConsentArchive {
  constructor(
    @InjectModel(ArchivedConsentEvent.name) private readonly archived: Model<ArchivedConsentEvent>,
  ) {}

  /** Stores events by id; one already archived stays as it is. */
  async archive(contactId: Types.ObjectId, events: ConsentEvent[]): Promise<void> {
    if (events.length === 0) return;
    await writeAll(
      this.archived,
      events.map((event) => ({
        updateOne: {
          filter: { _id: consentEventIdOf(contactId, event) },
          update: { $setOnInsert: archivedFields(contactId, event) },
          upsert: true,
        },
      })),
    );
  }

  /** The whole history, oldest first: the archived events and the contact's window, each event once. */
  async history(contact: Contact): Promise<ConsentEvent[]> {
    const archived = await this.archived
      .find({ contactId: contact._id })
      .sort({ at: 1, _id: 1 })
      .lean<ArchivedConsentEvent[]>()
      .exec();
    const byId = new Map<string, ConsentEvent>();
    for (const { contactId: _contact, ...event } of archived) byId.set(String(event._id), event);
    for (const event of contact.consentHistory ?? []) {
      byId.set(String(consentEventIdOf(contact._id, event)), event);
    }
    return [...byId.values()].sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
  }

  /**
   * A GDPR delete: every event of the person, archived or still in the window, is written anonymised to the
   * archive (overwriting). Those of the window too: a change that read the contact before the delete and
   * archives them afterwards then finds them archived already (and leaves them as they are).
   */
  async anonymise(contact: Contact, anonymised: (event: ConsentEvent) => ConsentEvent): Promise<void> {
    const events = await this.history(contact);
    if (events.length === 0) return;
    const operations: AnyBulkWriteOperation<ArchivedConsentEvent>[] = events.map((event) => ({
      updateOne: {
        filter: { _id: consentEventIdOf(contact._id, event) },
        update: { $set: archivedFields(contact._id, anonymised(event)) },
        upsert: true,
      },
    }));
    await writeAll(this.archived, operations);
  }
}

function archivedFields(contactId: Types.ObjectId, event: ConsentEvent): Omit<ArchivedConsentEvent, '_id'> {
  return {
    contactId,
    category: event.category,
    status: event.status,
    reason: event.reason ?? null,
    source: event.source,
    appId: event.appId ?? null,
    actor: event.actor,
    ip: event.ip ?? null,
    referralUrl: event.referralUrl ?? null,
    at: event.at,
  };
}
