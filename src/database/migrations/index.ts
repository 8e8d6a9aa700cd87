import type { Document, ObjectId } from 'mongodb';
import type { DataMigration } from './data-migration';

const idOf = (doc: Document) => doc._id as ObjectId;

/** Stored as every entry point now writes it: trimmed and lower-cased. */
const normalised = (address: unknown) =>
  typeof address === 'string' ? address.trim().toLowerCase() : address;

/** A top-level address field lower-cased, so a GDPR erasure finds it by its index. */
function lowerCaseField(name: string, collection: string, field: string): DataMigration {
  return {
    name,
    description: `${collection}.${field} lower-cased (GDPR erasure looks addresses up by index)`,
    collection,
    projection: { [field]: 1 },
    change(doc) {
      const value: unknown = doc[field];
      if (typeof value !== 'string' || normalised(value) === value) return null;
      return {
        updateOne: {
          filter: { _id: idOf(doc), [field]: value },
          update: { $set: { [field]: normalised(value) } },
        },
      };
    },
  };
}

const ticketMessageAuthors: DataMigration = {
  name: '2026-11-lower-case-ticket-message-authors',
  description: 'tickets.messages.authorEmail lower-cased (GDPR erasure looks addresses up by index)',
  collection: 'tickets',
  projection: { 'messages._id': 1, 'messages.authorEmail': 1 },
  change(doc) {
    const messages = (doc.messages ?? []) as Document[];
    const set: Document = {};
    const arrayFilters: Document[] = [];
    messages.forEach((message, i) => {
      const author: unknown = message.authorEmail;
      if (typeof author !== 'string' || normalised(author) === author) return;
      set[`messages.$[m${i}].authorEmail`] = normalised(author);
      arrayFilters.push({ [`m${i}._id`]: idOf(message), [`m${i}.authorEmail`]: author });
    });
    if (!arrayFilters.length) return null;
    return { updateOne: { filter: { _id: idOf(doc) }, update: { $set: set }, arrayFilters } };
  },
};

const planRecipients: DataMigration = {
  name: '2026-11-lower-case-plan-recipients',
  description: 'email_jobs plan recipients lower-cased (GDPR erasure looks addresses up by index)',
  collection: 'email_jobs',
  projection: { type: 1, 'payload.recipients': 1 },
  change(doc) {
    const recipients = (doc.payload as Document | undefined)?.recipients as Document[] | undefined;
    if (doc.type !== 'email.batch.plan' || !Array.isArray(recipients)) return null;
    if (recipients.every((recipient) => normalised(recipient?.to) === recipient?.to)) return null;
    const rewritten = recipients.map((recipient) =>
      recipient && typeof recipient === 'object' ? { ...recipient, to: normalised(recipient.to) } : recipient,
    );
    return {
      updateOne: {
        filter: { _id: idOf(doc), 'payload.recipients': recipients },
        update: { $set: { 'payload.recipients': rewritten } },
      },
    };
  },
};

/** Events written before they carried their expiry get one: their time plus the retention. */
function eventExpiry(retentionMs: number): DataMigration {
  return {
    name: '2026-11-email-events-expiry',
    description: 'email_events given expiresAt (EMAIL_EVENTS_RETENTION_DAYS after each event)',
    collection: 'email_events',
    projection: { createdAt: 1, expiresAt: 1 },
    change(doc) {
      if (doc.expiresAt || !(doc.createdAt instanceof Date)) return null;
      return {
        updateOne: {
          filter: { _id: idOf(doc), expiresAt: { $exists: false } },
          update: { $set: { expiresAt: new Date(doc.createdAt.getTime() + retentionMs) } },
        },
      };
    },
  };
}

/** Every data migration, in the order they run (docs/operations/running-on-mongodb.md "Index builds"). */
export function dataMigrations(settings: { emailEventRetentionMs: number }): DataMigration[] {
  return [
    lowerCaseField('2026-11-lower-case-feedback-email', 'feedback', 'email'),
    lowerCaseField('2026-11-lower-case-want-author-email', 'wants', 'authorEmail'),
    ticketMessageAuthors,
    planRecipients,
    eventExpiry(settings.emailEventRetentionMs),
  ];
}
