import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { type AnyBulkWriteOperation, type Collection, ObjectId } from 'mongodb';
import { Model } from 'mongoose';
import { insertKeepingDuplicates, writeAll } from '../../common/database/bulk-writes';
import type { AppConfig } from '../../config/env';
import { ContactEvents, type ContactErasedEvent } from '../../contacts/contact.events';
import { messageIdOf, senderDomain } from '../delivery/message-headers';
import { MessageLedgerEntry } from './schemas/message-ledger.schema';
import { type EmailStream, streamOf } from './schemas/email-job.schema';

const DAY_MS = 86_400_000;

/** Who and what for: the fields an entry is created with (when queued, or by the send that repairs it). */
export interface LedgerMessage {
  jobId: ObjectId;
  idempotencyKey: string;
  to: string | null;
  appId: string | null;
  campaignId: string | null;
  contactId: string | null;
  stream: EmailStream;
}

/** A send the worker recorded. */
export interface LedgerSend {
  message: LedgerMessage;
  messageId: string;
  provider: string;
  /** The provider's own id of the message, from its answer to the send (when it gives one). */
  providerMessageId?: string;
}

/** The recipient fields of an `email.send` job as the ledger keeps them. */
export function ledgerMessageOf(job: {
  _id: ObjectId;
  idempotencyKey: string;
  appId: string | null;
  campaignId: string | null;
  stream?: EmailStream | null;
  payload: Record<string, unknown>;
}): LedgerMessage {
  const { to, contactId } = job.payload as { to?: unknown; contactId?: unknown };
  return {
    jobId: job._id,
    idempotencyKey: job.idempotencyKey,
    to: typeof to === 'string' ? to.trim().toLowerCase() : null,
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    contactId: typeof contactId === 'string' ? contactId : null,
    stream: streamOf(job),
  };
}

/**
 * The message ledger (`email_messages`, schemas/message-ledger.schema.ts): what bounces, complaints and
 * reused idempotency keys need of a message after its job has expired. An entry is written when the job is
 * queued, before anything can be sent, so no crash of a worker can leave a sent message without one; the
 * worker's recorded send completes it in the same batch as the outcomes (one write per batch), and creates
 * it if the queueing write was lost. Every event moves its expiry (retention measured from the last event).
 */
@Injectable()
export class MessageLedger {
  private readonly retentionMs: number;
  private readonly messageIdDomain: string;

  constructor(
    @InjectModel(MessageLedgerEntry.name) private readonly model: Model<MessageLedgerEntry>,
    config: ConfigService<AppConfig, true>,
  ) {
    this.retentionMs = config.get('EMAIL_MESSAGE_RETENTION_DAYS', { infer: true }) * DAY_MS;
    this.messageIdDomain = senderDomain(config.get('MAIL_FROM', { infer: true }));
  }

  private get collection(): Collection {
    return this.model.collection;
  }

  expiresAt(lastEventAt: Date): Date {
    return new Date(lastEventAt.getTime() + this.retentionMs);
  }

  /** The job ids of the keys the ledger knows (one lookup in its unique key index). */
  async known(idempotencyKeys: string[]): Promise<Map<string, string>> {
    const known = new Map<string, string>();
    if (idempotencyKeys.length === 0) return known;
    const found = await this.collection
      .find({ idempotencyKey: { $in: idempotencyKeys } }, { projection: { idempotencyKey: 1 } })
      .toArray();
    for (const entry of found) known.set(entry.idempotencyKey as string, String(entry._id));
    return known;
  }

  /** Entries for newly queued messages, in one unordered insert; an entry already there stays as it is. */
  async recordQueued(messages: LedgerMessage[], now = new Date()): Promise<void> {
    if (messages.length === 0) return;
    const docs = messages.map(({ jobId, ...message }) => ({
      _id: jobId,
      ...message,
      messageId: messageIdOf(String(jobId), this.messageIdDomain),
      createdAt: now,
      lastEventAt: now,
      expiresAt: this.expiresAt(now),
    }));
    // A duplicate is an entry already there; any other failure (a lost batch too) is thrown.
    await insertKeepingDuplicates(this.collection, docs);
  }

  /**
   * Completes the entries of sent messages in one round trip. An upsert: an entry whose queueing write was
   * lost (a crash between the job's insert and the ledger's) is created from what the job carries.
   */
  async recordSent(sends: LedgerSend[], now = new Date()): Promise<void> {
    if (sends.length === 0) return;
    const operations: AnyBulkWriteOperation[] = sends.map(
      ({ message, messageId, provider, providerMessageId }) => {
        const { jobId, ...fields } = message;
        return {
          updateOne: {
            filter: { _id: jobId },
            update: {
              $set: {
                messageId,
                provider,
                ...(providerMessageId ? { providerMessageId } : {}),
                sentAt: now,
                lastEventAt: now,
                expiresAt: this.expiresAt(now),
              },
              $setOnInsert: { ...fields, createdAt: now },
            },
            upsert: true,
          },
        };
      },
    );
    await writeAll(this.collection, operations);
  }

  /** The entry of one message by its job id. */
  async find(jobId: string): Promise<MessageLedgerEntry | null> {
    if (!ObjectId.isValid(jobId)) return null;
    return this.collection.findOne<MessageLedgerEntry>({ _id: new ObjectId(jobId) });
  }

  /** The entry of one message by the provider's own id of it (one lookup in its sparse index). */
  findByProviderId(providerMessageId: string): Promise<MessageLedgerEntry | null> {
    return this.collection.findOne<MessageLedgerEntry>({ providerMessageId: { $eq: providerMessageId } });
  }

  /** The Message-IDs of the latest `limit` messages queued to an address, newest first (one index range). */
  async latestTo(address: string, limit: number): Promise<string[]> {
    const entries = await this.collection
      .find({ to: address }, { projection: { messageId: 1 }, sort: { _id: -1 }, limit })
      .toArray();
    return entries.map((entry) => entry.messageId as string);
  }

  /** The entries of these job ids (one lookup by `_id`); ids that are not ObjectIds find nothing. */
  async findMany(jobIds: string[]): Promise<MessageLedgerEntry[]> {
    const ids = jobIds.filter((id) => ObjectId.isValid(id)).map((id) => new ObjectId(id));
    if (ids.length === 0) return [];
    return this.collection.find<MessageLedgerEntry>({ _id: { $in: ids } }).toArray();
  }

  /** Provider events about these messages: their retention starts again from `at` (one write). */
  async touchMany(jobIds: string[], at = new Date()): Promise<void> {
    const ids = [...new Set(jobIds)].filter((id) => ObjectId.isValid(id)).map((id) => new ObjectId(id));
    if (ids.length === 0) return;
    await this.collection.updateMany(
      { _id: { $in: ids } },
      { $set: { lastEventAt: at, expiresAt: this.expiresAt(at) } },
    );
  }

  /**
   * A GDPR erasure: the address becomes the placeholder in every entry to it, and a key that names the
   * address becomes `erased:<job id>` (as on the jobs). Safe to run again.
   */
  @OnEvent(ContactEvents.Erased, { suppressErrors: false })
  async onContactErased({ email, placeholder }: ContactErasedEvent): Promise<void> {
    const address = email.trim().toLowerCase();
    const entries = await this.collection
      .find({ to: address }, { projection: { idempotencyKey: 1 } })
      .toArray();
    if (entries.length === 0) return;
    await writeAll(
      this.collection,
      entries.map((entry) => ({
        updateOne: {
          filter: { _id: entry._id, to: address },
          update: {
            $set: {
              to: placeholder,
              ...(String(entry.idempotencyKey).toLowerCase().includes(address)
                ? { idempotencyKey: `erased:${String(entry._id)}` }
                : {}),
            },
          },
        },
      })),
    );
  }
}
