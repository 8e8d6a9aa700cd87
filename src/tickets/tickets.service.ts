import { ConflictException, Injectable, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { BSON } from 'mongodb';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { type Model, type QueryFilter, trusted, Types } from 'mongoose';
import { AppsService } from '../apps/apps.service';
import type { Pagination } from '../common/http/envelope';
import { aggregatePage, findPage } from '../common/pagination/pagination';
import type {
  CreateTicketInput,
  CreateTicketMessageDto,
  ListAppTicketsQuery,
  UpdateAppTicketDto,
} from './dto/ticket-input.dto';
import { type AttachmentDownload, TicketAttachmentsService } from './ticket-attachments.service';
import { excerpt, TicketCreatedEvent, TicketCustomerMessageEvent, TicketEvents } from './ticket.events';
import { assertServedAcrossApps, ticketIdFilter, ticketListFilter, ticketListSort } from './ticket-query';
import {
  MAX_MESSAGES_PER_TICKET,
  PRIORITY_RANK,
  RESOLVED_STATUSES,
  STATUS_RANK,
  THREAD_MAX_BYTES,
  Ticket,
  type TicketMessage,
} from './schemas/ticket.schema';

/** The `appId` of the global family's calls: tickets of every app. */
export const ALL_APPS = undefined;

/** The 409 of a message to a full thread. */
export const THREAD_FULL = `A ticket holds at most ${MAX_MESSAGES_PER_TICKET} messages`;

/**
 * Tickets of both families. Every method takes the app first, as tenancy reads (`appId`, then the ticket):
 * an app id confines the call to that app; ALL_APPS (undefined) is the global family, for any app.
 */
@Injectable()
export class TicketsService {
  constructor(
    @InjectModel(Ticket.name) private readonly tickets: Model<Ticket>,
    private readonly apps: AppsService,
    private readonly attachments: TicketAttachmentsService,
    private readonly events: EventEmitter2,
  ) {}

  async create(appId: string, { dto, files }: CreateTicketInput): Promise<Ticket> {
    await this.apps.requireApp(appId);
    const _id = new Types.ObjectId();
    const uploaded = await this.attachments.store(appId, String(_id), files);
    const priority = dto.priority ?? 'normal';
    let created: Ticket;
    try {
      const document = await this.tickets.create({
        _id,
        appId,
        shopId: dto.shopId,
        topic: dto.topic ?? 'general',
        email: dto.email,
        subject: dto.subject,
        message: dto.message,
        status: 'pending',
        statusRank: STATUS_RANK.pending,
        priority,
        priorityRank: PRIORITY_RANK[priority],
        attachments: uploaded,
      });
      created = document.toObject();
    } catch (error) {
      await this.attachments.remove(appId, String(_id), uploaded);
      throw error;
    }
    this.events.emit(
      TicketEvents.Created,
      new TicketCreatedEvent(
        appId,
        String(created._id),
        created.subject,
        created.email,
        created.topic,
        created.priority,
        excerpt(created.message),
        created.shopId,
      ),
    );
    return created;
  }

  /**
   * One page. An app's list (what a client app reads) is one aggregation, the page and its capped total
   * together (docs/decisions/data-one-command-client-reads.md); the list across apps keeps two round trips,
   * because its unfiltered total is the collection's count from metadata, exact and without a scan.
   */
  async list(
    appId: string | undefined,
    query: ListAppTicketsQuery,
  ): Promise<{ items: Ticket[]; pagination: Pagination }> {
    if (appId === undefined) assertServedAcrossApps(query);
    const pageQuery = {
      filter: ticketListFilter(query, appId),
      sort: ticketListSort(query.sortBy, query.sortOrder),
      page: query.page,
      limit: query.limit,
      after: query.after,
      // The thread is read by its own route; `findPage` leaves it out by the schema's `select: false`.
      projection: { messages: 0 as const },
    };
    return appId === undefined ? findPage(this.tickets, pageQuery) : aggregatePage(this.tickets, pageQuery);
  }

  async get(appId: string | undefined, id: string): Promise<Ticket> {
    const ticket = await this.tickets.findOne(ticketIdFilter(id, appId)).lean<Ticket>().exec();
    if (!ticket) throw new NotFoundException('Ticket not found');
    return ticket;
  }

  /**
   * Applies status, priority and topic changes. Any status may follow any; entering resolved or closed
   * records `resolvedAt` (kept when moving between the two), going back to pending or in_progress clears it.
   */
  async update(appId: string | undefined, id: string, changes: UpdateAppTicketDto): Promise<Ticket> {
    const filter = ticketIdFilter(id, appId);
    // An empty body never gets here: the PATCH routes refuse it (NothingToUpdatePipe).
    const { status, priority, topic } = changes;
    const set: Record<string, unknown> = {};
    const unset: Record<string, 1> = {};
    if (topic !== undefined) set.topic = topic;
    if (priority !== undefined) Object.assign(set, { priority, priorityRank: PRIORITY_RANK[priority] });
    // `$min` sets a missing `resolvedAt` and keeps an earlier one: no read of the ticket first.
    const min: Record<string, Date> = {};
    if (status !== undefined) {
      Object.assign(set, { status, statusRank: STATUS_RANK[status] });
      if (RESOLVED_STATUSES.includes(status)) min.resolvedAt = new Date();
      else unset.resolvedAt = 1;
    }
    const updated = await this.tickets
      .findOneAndUpdate(
        filter,
        {
          $set: set,
          ...(Object.keys(unset).length ? { $unset: unset } : {}),
          ...(Object.keys(min).length ? { $min: min } : {}),
        },
        { returnDocument: 'after' },
      )
      .lean<Ticket>()
      .exec();
    if (!updated) throw new NotFoundException('Ticket not found');
    return updated;
  }

  /** Deletes the ticket, then (best effort) its stored files. */
  async remove(appId: string | undefined, id: string): Promise<void> {
    const deleted = await this.tickets
      .findOneAndDelete(ticketIdFilter(id, appId), { projection: { appId: 1, attachments: 1 } })
      .lean<Pick<Ticket, '_id' | 'appId' | 'attachments'>>()
      .exec();
    if (!deleted) throw new NotFoundException('Ticket not found');
    await this.attachments.remove(deleted.appId, String(deleted._id), deleted.attachments);
  }

  /** Deletes the listed tickets of this app (ids of other apps or unknown ids are skipped). */
  async removeMany(appId: string, ids: string[]): Promise<number> {
    const filter: QueryFilter<Ticket> = { appId, _id: trusted({ $in: [...new Set(ids)] }) };
    const found = await this.tickets
      .find(filter, { attachments: 1 })
      .lean<Pick<Ticket, '_id' | 'attachments'>[]>()
      .exec();
    if (found.length === 0) return 0;
    const { deletedCount } = await this.tickets
      .deleteMany({ appId, _id: trusted({ $in: found.map((ticket) => ticket._id) }) })
      .exec();
    for (const ticket of found) await this.attachments.remove(appId, String(ticket._id), ticket.attachments);
    return deletedCount;
  }

  /**
   * Appends a message to the thread in one guarded update, capped at MAX_MESSAGES_PER_TICKET messages
   * (409: the thread is full) and THREAD_MAX_BYTES (413: this message does not fit).
   */
  async addMessage(appId: string, id: string, dto: CreateTicketMessageDto): Promise<TicketMessage> {
    const filter = ticketIdFilter(id, appId);
    const message: TicketMessage = {
      _id: new Types.ObjectId(),
      content: dto.content,
      isCustomer: dto.isCustomer ?? false,
      authorEmail: dto.authorEmail,
      authorName: dto.authorName,
      createdAt: new Date(),
    };
    const bytes = threadEntryBytes(message);
    const ticket = await this.tickets
      .findOneAndUpdate(
        {
          ...filter,
          messageCount: trusted({ $lt: MAX_MESSAGES_PER_TICKET }),
          // Absent (a ticket older than the counter) matches: its thread is counted from here on.
          threadBytes: trusted({ $not: { $gt: THREAD_MAX_BYTES - bytes } }),
        },
        { $push: { messages: message }, $inc: { messageCount: 1, threadBytes: bytes } },
        { returnDocument: 'after', projection: { subject: 1, email: 1 } },
      )
      .lean<Pick<Ticket, 'subject' | 'email'>>()
      .exec();
    if (!ticket) {
      const full = await this.get(appId, id);
      if (full.messageCount >= MAX_MESSAGES_PER_TICKET) {
        throw new ConflictException(THREAD_FULL);
      }
      throw new PayloadTooLargeException(
        `content: a ticket's messages hold at most ${THREAD_MAX_BYTES / 1024 / 1024} MiB; this message (${bytes} bytes) does not fit`,
      );
    }
    if (message.isCustomer) {
      this.events.emit(
        TicketEvents.CustomerMessage,
        new TicketCustomerMessageEvent(
          appId,
          id,
          String(message._id),
          ticket.subject,
          ticket.email,
          excerpt(message.content),
          message.authorEmail,
          message.authorName,
        ),
      );
    }
    return message;
  }

  /** The thread, oldest first (messages are only ever appended). */
  async listMessages(appId: string, id: string): Promise<TicketMessage[]> {
    const ticket = await this.tickets
      .findOne(ticketIdFilter(id, appId), { messages: 1 })
      .lean<Pick<Ticket, 'messages'>>()
      .exec();
    if (!ticket) throw new NotFoundException('Ticket not found');
    return ticket.messages ?? [];
  }

  async openAttachment(appId: string, id: string, key: string): Promise<AttachmentDownload> {
    const ticket = await this.get(appId, id);
    return this.attachments.open(appId, String(ticket._id), key, ticket.attachments);
  }
}

/** A message's bytes in the thread: its BSON document plus the array entry's type byte and index key. */
export function threadEntryBytes(message: TicketMessage): number {
  return BSON.calculateObjectSize(message) + 1 + String(MAX_MESSAGES_PER_TICKET).length + 1;
}
