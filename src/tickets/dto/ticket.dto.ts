import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  TICKET_TOPICS,
  type Ticket,
  type TicketAttachment,
  type TicketMessage,
  type TicketPriority,
  type TicketStatus,
  type TicketTopic,
} from '../schemas/ticket.schema';

export class TicketAttachmentView {
  @ApiProperty({ format: 'uri', description: 'Download URL (uploaded files need a bearer token)' })
  url: string;
  @ApiPropertyOptional({ description: 'Storage key of an uploaded file; absent for hosted attachments' })
  key?: string;
  @ApiProperty() filename: string;
  @ApiProperty() mimetype: string;
  @ApiProperty({ description: 'Bytes' }) size: number;
  @ApiProperty({ format: 'date-time' }) uploadedAt: Date;
}

export class TicketView {
  @ApiProperty({ description: 'The ticket id, `{messageId}` in paths' }) _id: string;
  @ApiProperty() appId: string;
  @ApiPropertyOptional() shopId?: string;
  @ApiProperty({ enum: TICKET_TOPICS }) topic: TicketTopic;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty() subject: string;
  @ApiProperty() message: string;
  @ApiProperty({ enum: TICKET_STATUSES }) status: TicketStatus;
  @ApiProperty({ enum: TICKET_PRIORITIES }) priority: TicketPriority;
  @ApiProperty({ type: [TicketAttachmentView] }) attachments: TicketAttachmentView[];
  @ApiProperty({ description: 'Messages in the thread' }) messageCount: number;
  @ApiPropertyOptional({ format: 'date-time', description: 'When the ticket became resolved or closed' })
  resolvedAt?: Date;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export class TicketMessageView {
  @ApiProperty() _id: string;
  @ApiProperty() content: string;
  @ApiProperty() isCustomer: boolean;
  @ApiPropertyOptional({ format: 'email' }) authorEmail?: string;
  @ApiPropertyOptional() authorName?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
}

export class TicketActivityView {
  @ApiProperty() _id: string;
  @ApiProperty() subject: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: TICKET_STATUSES }) status: TicketStatus;
  @ApiProperty({ enum: TICKET_PRIORITIES }) priority: TicketPriority;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
}

export class DailyCountView {
  @ApiProperty({ example: '2025-01-31', description: 'UTC day' }) date: string;
  @ApiProperty() count: number;
}

const countsOf = (values: readonly string[]) => ({
  type: 'object' as const,
  additionalProperties: { type: 'integer' },
  example: Object.fromEntries(values.map((value) => [value, 0])),
});

export class TicketStatsView {
  @ApiProperty() total: number;
  @ApiProperty({ ...countsOf(TICKET_STATUSES), description: 'Every status, zero included' })
  byStatus: Record<string, number>;
  @ApiProperty({ ...countsOf(TICKET_TOPICS), description: 'Every topic, zero included' })
  byTopic: Record<string, number>;
  @ApiProperty({ ...countsOf(TICKET_PRIORITIES), description: 'Every priority, zero included' })
  byPriority: Record<string, number>;
  @ApiProperty({ type: [TicketActivityView], description: 'The 10 newest tickets of the range' })
  recentActivity: TicketActivityView[];
  @ApiProperty({ type: [DailyCountView], description: 'One entry per UTC day of the range, zeros included' })
  volumeOverTime: DailyCountView[];
  @ApiProperty({ description: 'Mean hours from creation to resolution (2 decimals; 0 when none resolved)' })
  averageResolutionTime: number;
}

export class BulkDeleteResultSchema {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty() message: string;
  @ApiProperty() deletedCount: number;
}

function toAttachmentView(attachment: TicketAttachment): TicketAttachmentView {
  return {
    url: attachment.url,
    ...(attachment.key ? { key: attachment.key } : {}),
    filename: attachment.filename,
    mimetype: attachment.mimetype,
    size: attachment.size,
    uploadedAt: attachment.uploadedAt,
  };
}

/** The one place a stored ticket becomes a response (the thread is read through the messages routes). */
export function toTicketView(ticket: Ticket): TicketView {
  return {
    _id: String(ticket._id),
    appId: ticket.appId,
    shopId: ticket.shopId,
    topic: ticket.topic,
    email: ticket.email,
    subject: ticket.subject,
    message: ticket.message,
    status: ticket.status,
    priority: ticket.priority,
    attachments: (ticket.attachments ?? []).map(toAttachmentView),
    messageCount: ticket.messageCount ?? 0,
    resolvedAt: ticket.resolvedAt,
    createdAt: ticket.createdAt,
    updatedAt: ticket.updatedAt,
  };
}

export function toTicketMessageView(message: TicketMessage): TicketMessageView {
  return {
    _id: String(message._id),
    content: message.content,
    isCustomer: message.isCustomer,
    authorEmail: message.authorEmail,
    authorName: message.authorName,
    createdAt: message.createdAt,
  };
}
