import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { type HydratedDocument, Types } from 'mongoose';
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
 * beside the values (and kept in step by the service) so an index can serve those sorts.
 */
export const STATUS_RANK: Record<TicketStatus, number> = {
  pending: 0,
  in_progress: 1,
  resolved: 2,
  closed: 3,
};
export const PRIORITY_RANK: Record<TicketPriority, number> = { low: 0, normal: 1, high: 2, urgent: 3 };

/** A thread is capped so a ticket document stays far below MongoDB's 16 MiB limit. */
export const MAX_MESSAGES_PER_TICKET = 500;
export const MESSAGE_MAX_LENGTH = 10_000;

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
  @Prop() authorEmail?: string;
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

  /** Set when the ticket first becomes resolved or closed; cleared when it is reopened. */
  @Prop() resolvedAt?: Date;

  createdAt: Date;
  updatedAt: Date;
}

export type TicketDocument = HydratedDocument<Ticket>;
export const TicketSchema = SchemaFactory.createForClass(Ticket);

// App-scoped lists (GET /{appId}/tickets) and statistics: every query starts with appId. `_id` ends each key
// because lists break ties on it, so the index yields the whole sort order.
// Default sort (createdAt) and the startDate/endDate range of lists and statistics.
TicketSchema.index({ appId: 1, createdAt: -1, _id: -1 });
// Filter by status, sorted by createdAt.
TicketSchema.index({ appId: 1, status: 1, createdAt: -1, _id: -1 });
// Filter by topic, sorted by createdAt.
TicketSchema.index({ appId: 1, topic: 1, createdAt: -1, _id: -1 });
// Filter by priority, sorted by createdAt.
TicketSchema.index({ appId: 1, priority: 1, createdAt: -1, _id: -1 });
// Filter by shopId (lists and statistics), sorted by createdAt.
TicketSchema.index({ appId: 1, shopId: 1, createdAt: -1, _id: -1 });
// Filter by the customer's e-mail, sorted by createdAt.
TicketSchema.index({ appId: 1, email: 1, createdAt: -1, _id: -1 });
// sortBy=updatedAt.
TicketSchema.index({ appId: 1, updatedAt: -1, _id: -1 });
// sortBy=priority (urgency order).
TicketSchema.index({ appId: 1, priorityRank: -1, _id: -1 });
// sortBy=status (workflow order).
TicketSchema.index({ appId: 1, statusRank: 1, _id: 1 });
// sortBy=subject.
TicketSchema.index({ appId: 1, subject: 1, _id: 1 });

// The global list (GET /tickets) without an appId filter: the same filters and sorts across apps.
// Default sort (createdAt) and the startDate/endDate range.
TicketSchema.index({ createdAt: -1, _id: -1 });
// Filter by status, sorted by createdAt.
TicketSchema.index({ status: 1, createdAt: -1, _id: -1 });
// Filter by topic, sorted by createdAt.
TicketSchema.index({ topic: 1, createdAt: -1, _id: -1 });
// Filter by priority, sorted by createdAt.
TicketSchema.index({ priority: 1, createdAt: -1, _id: -1 });
// Filter by shopId, sorted by createdAt.
TicketSchema.index({ shopId: 1, createdAt: -1, _id: -1 });
// Filter by the customer's e-mail, sorted by createdAt.
TicketSchema.index({ email: 1, createdAt: -1, _id: -1 });
// sortBy=updatedAt.
TicketSchema.index({ updatedAt: -1, _id: -1 });
// sortBy=priority.
TicketSchema.index({ priorityRank: -1, _id: -1 });
// sortBy=status.
TicketSchema.index({ statusRank: 1, _id: 1 });
// sortBy=subject.
TicketSchema.index({ subject: 1, _id: 1 });
