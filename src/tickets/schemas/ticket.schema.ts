import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Types } from 'mongoose';
import { PRIORITIES, type Priority } from '../../common/priority';

export const TICKET_STATUSES = ['pending', 'in_progress', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];
export const TICKET_PRIORITIES = PRIORITIES;
export type TicketPriority = Priority;
export const TICKET_TOPICS = ['general', 'technical', 'billing', 'feature'] as const;
export type TicketTopic = (typeof TICKET_TOPICS)[number];

/** A ticket in one of these statuses counts as resolved: it carries `resolvedAt`. */
export const RESOLVED_STATUSES: readonly TicketStatus[] = ['resolved', 'closed'];

/**
 * Sorting by status or priority follows the workflow and urgency, not the alphabet: the ranks are stored
 * beside the values (and kept in step by the service) because a `find` can sort only by stored values.
 */
export const STATUS_RANK: Record<TicketStatus, number> = {
  pending: 0,
  in_progress: 1,
  resolved: 2,
  closed: 3,
};
export const PRIORITY_RANK: Record<TicketPriority, number> = { low: 0, normal: 1, high: 2, urgent: 3 };

/**
 * A thread is capped so a ticket document stays below MongoDB's 16 MiB limit. The count alone does not do
 * it: a message of MESSAGE_MAX_LENGTH characters outside the Basic Multilingual Plane (an emoji is one
 * character to the validator, four bytes in BSON) takes about 40 KB, so 500 of them would be 20 MB. The
 * thread's BSON bytes are counted too (`threadBytes`) and capped at THREAD_MAX_BYTES, which leaves the rest
 * of the ticket (its opening message, subject, attachments' metadata: under 100 KB at worst) ample room
 * (docs/operations/data-retention.md). Ordinary text never reaches the byte cap before the count cap.
 */
export const MAX_MESSAGES_PER_TICKET = 500;
export const MESSAGE_MAX_LENGTH = 10_000;
export const THREAD_MAX_BYTES = 12 * 1024 * 1024;

@Schema({ _id: false })
export class TicketAttachment {
  @Prop({ required: true }) url: string;
  /** Storage key of a file uploaded with the ticket; absent for attachments hosted elsewhere. */
  @Prop() key?: string;
  @Prop({ required: true }) filename: string;
  @Prop({ required: true }) mimetype: string;
  @Prop({ required: true }) size: number;
  @Prop({ required: true }) uploadedAt: Date;
}

@Schema()
export class TicketMessage {
  _id: Types.ObjectId;
  @Prop({ required: true, maxlength: MESSAGE_MAX_LENGTH }) content: string;
  @Prop({ default: false }) isCustomer: boolean;
  /** Lower-cased like the ticket's `email`: a GDPR erasure finds it by one index lookup. */
  @Prop({ lowercase: true, trim: true }) authorEmail?: string;
  @Prop() authorName?: string;
  @Prop({ required: true }) createdAt: Date;
}

@Schema({ collection: 'tickets', timestamps: true })
export class Ticket {
  _id: Types.ObjectId;

  @Prop({ required: true }) appId: string;
  @Prop() shopId?: string;
  @Prop({ type: String, enum: TICKET_TOPICS, default: 'general' }) topic: TicketTopic;
  @Prop({ required: true, lowercase: true, trim: true }) email: string;
  @Prop({ required: true }) subject: string;
  @Prop({ required: true }) message: string;
  @Prop({ type: String, enum: TICKET_STATUSES, default: 'pending' }) status: TicketStatus;
  @Prop({ type: String, enum: TICKET_PRIORITIES, default: 'normal' }) priority: TicketPriority;
  @Prop({ default: STATUS_RANK.pending }) statusRank: number;
  @Prop({ default: PRIORITY_RANK.normal }) priorityRank: number;
  @Prop({ type: [TicketAttachment], default: [] }) attachments: TicketAttachment[];

  /** The thread, read only by the messages routes: lists and single reads leave it out. */
  @Prop({ type: [TicketMessage], default: [], select: false }) messages: TicketMessage[];
  @Prop({ default: 0 }) messageCount: number;
  /**
   * The thread's size in BSON bytes (THREAD_MAX_BYTES); absent on tickets older than the field: read as 0.
   */
  @Prop({ default: 0 }) threadBytes: number;

  /** Set when the ticket first becomes resolved or closed; cleared when it is reopened. */
  @Prop() resolvedAt?: Date;

  createdAt: Date;
  updatedAt: Date;
}

export const TicketSchema = SchemaFactory.createForClass(Ticket);

// Only the shapes the code queries often or selectively (docs/decisions/api-tickets.md). Each key
// ends in `createdAt, _id` (the default sort, ties on `_id`, and the startDate/endDate range), so a default
// page is read in order. Other filters and sorts narrow by one of these and sort the matches.
// TicketsService.list (app family, default sort, date range) and TicketStatsService.stats ($match, recent).
TicketSchema.index({ appId: 1, createdAt: -1, _id: -1 });
// TicketsService.list filtered by status (the triage view: pending, in progress).
TicketSchema.index({ appId: 1, status: 1, createdAt: -1, _id: -1 });
// TicketsService.list filtered by shopId, and TicketStatsService.stats for one shop.
TicketSchema.index({ appId: 1, shopId: 1, createdAt: -1, _id: -1 });
// TicketsService.list filtered by the customer's e-mail (one customer's tickets).
TicketSchema.index({ appId: 1, email: 1, createdAt: -1, _id: -1 });
// TicketsService.list without appId (GET /tickets, across apps): default sort and date range.
TicketSchema.index({ createdAt: -1, _id: -1 });
// GET /tickets across apps filtered by one of status, topic, priority or e-mail, newest first
// (ticketListFilter); read backwards, the e-mail one also serves a person's tickets oldest first (data
// export, GDPR erasure: the address is stored lower-cased).
for (const field of ['status', 'topic', 'priority', 'email']) {
  TicketSchema.index({ [field]: 1, createdAt: -1, _id: -1 });
}
// GET /tickets across apps sorted by priority, status, subject or last change (ticketListSort; unfiltered:
// a filter across apps comes with the default sort, see ticketListFilter).
for (const key of ['priorityRank', 'statusRank', 'subject', 'updatedAt']) {
  TicketSchema.index({ [key]: 1, _id: 1 });
}
// A GDPR erasure of an address that wrote in other people's threads (multikey on the messages).
TicketSchema.index({ 'messages.authorEmail': 1 }, { sparse: true });
