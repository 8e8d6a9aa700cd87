import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsISO8601,
  IsMongoId,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import { PaginationQueryDto, SORT_ORDERS } from '../../common/pagination/pagination';
import {
  MESSAGE_MAX_LENGTH,
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  TICKET_TOPICS,
  type TicketPriority,
  type TicketStatus,
  type TicketTopic,
} from '../schemas/ticket.schema';
import { IsEmailAddress } from '../../common/validation/email-address';
import { Omittable } from '../../common/validation/omittable.decorator';

export const SUBJECT_MAX_LENGTH = 200;
export const SEARCH_MAX_LENGTH = 100;
export const MAX_BULK_DELETE = 100;
export const TICKET_SORT_FIELDS = ['createdAt', 'updatedAt', 'priority', 'status', 'subject'] as const;
export type TicketSortField = (typeof TICKET_SORT_FIELDS)[number];

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const lowerTrim = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;

/** `POST /{appId}/tickets` as JSON, and the fields of its multipart form. */
export class CreateTicketDto {
  @ApiProperty({ format: 'email' }) @Transform(lowerTrim) @IsEmailAddress() email: string;

  @ApiProperty({ maxLength: SUBJECT_MAX_LENGTH })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(SUBJECT_MAX_LENGTH)
  subject: string;

  @ApiProperty({ maxLength: MESSAGE_MAX_LENGTH })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(MESSAGE_MAX_LENGTH)
  message: string;

  @ApiPropertyOptional({ enum: TICKET_TOPICS, default: 'general' })
  @IsOptional()
  @IsIn(TICKET_TOPICS)
  topic?: TicketTopic;

  @ApiPropertyOptional({ enum: TICKET_PRIORITIES, default: 'normal' })
  @IsOptional()
  @IsIn(TICKET_PRIORITIES)
  priority?: TicketPriority;

  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @MaxLength(100) shopId?: string;

  /**
   * Named by the API contract, but a client cannot supply attachments: they are the files uploaded with the
   * ticket (multipart `files`), described from the stored file (docs/decisions/security-edges.md).
   */
  @ApiPropertyOptional({
    type: 'array',
    items: {},
    maxItems: 0,
    description:
      'Only an empty list: attachments are the files uploaded with the ticket (multipart/form-data `files`).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(0, {
    message:
      'attachments must be uploaded as files (multipart/form-data field "files"); a body cannot name them',
  })
  attachments?: never[];
}

/** A file uploaded with a new ticket, read into memory (at most 5 MiB: see ticket-form.ts). */
export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

/** What `POST /{appId}/tickets` hands to TicketsService.create: the validated fields and the files. */
export interface CreateTicketInput {
  dto: CreateTicketDto;
  files: UploadedFile[];
}

/** The request body as documented: the JSON fields, or the same fields plus files as multipart/form-data. */
export class CreateTicketBody extends CreateTicketDto {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', format: 'binary' },
    description:
      'multipart/form-data only: up to 5 files of at most 5 MiB each (PNG, JPEG, GIF, WebP, PDF or plain text)',
  })
  files?: unknown[];
}

export class TicketStatusDto {
  @ApiProperty({ enum: TICKET_STATUSES }) @IsIn(TICKET_STATUSES) status: TicketStatus;
}

/** `PATCH /tickets/{messageId}`: at least one field. */
/** A PATCH leaves out what it does not change; `null` is no status, priority or topic (400). */
export class UpdateTicketDto {
  @ApiPropertyOptional({ enum: TICKET_STATUSES }) @Omittable() @IsIn(TICKET_STATUSES) status?: TicketStatus;

  @ApiPropertyOptional({ enum: TICKET_PRIORITIES })
  @Omittable()
  @IsIn(TICKET_PRIORITIES)
  priority?: TicketPriority;
}

/** `PATCH /{appId}/tickets/{messageId}`: at least one field. */
export class UpdateAppTicketDto extends UpdateTicketDto {
  @ApiPropertyOptional({ enum: TICKET_TOPICS }) @Omittable() @IsIn(TICKET_TOPICS) topic?: TicketTopic;
}

export class BulkDeleteTicketsDto {
  @ApiProperty({ type: [String], minItems: 1, maxItems: MAX_BULK_DELETE, description: 'Ticket ids' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_DELETE)
  @IsMongoId({ each: true })
  ids: string[];
}

export class CreateTicketMessageDto {
  @ApiProperty({ maxLength: MESSAGE_MAX_LENGTH })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(MESSAGE_MAX_LENGTH)
  content: string;

  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() isCustomer?: boolean;

  @ApiPropertyOptional({ format: 'email' })
  @IsOptional()
  @Transform(lowerTrim)
  @IsEmailAddress()
  authorEmail?: string;

  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @MaxLength(100) authorName?: string;
}

const DATE_DESCRIPTION =
  'ISO 8601 date (YYYY-MM-DD, a whole UTC day; endDate includes that day) or date-time (exact instant)';

/** `startDate`/`endDate` of lists and statistics. */
export class DateRangeQuery {
  @ApiPropertyOptional({ description: DATE_DESCRIPTION, example: '2025-01-01' })
  @IsOptional()
  @IsISO8601({ strict: true })
  startDate?: string;

  @ApiPropertyOptional({ description: DATE_DESCRIPTION, example: '2025-01-31' })
  @IsOptional()
  @IsISO8601({ strict: true })
  endDate?: string;
}

/** `GET /{appId}/tickets`. */
export class ListAppTicketsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: TICKET_STATUSES }) @IsOptional() @IsIn(TICKET_STATUSES) status?: TicketStatus;
  @ApiPropertyOptional({ enum: TICKET_TOPICS }) @IsOptional() @IsIn(TICKET_TOPICS) topic?: TicketTopic;

  @ApiPropertyOptional({ enum: TICKET_PRIORITIES })
  @IsOptional()
  @IsIn(TICKET_PRIORITIES)
  priority?: TicketPriority;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100) shopId?: string;

  @ApiPropertyOptional({ description: 'Exact customer e-mail (case-insensitive)' })
  @IsOptional()
  @Transform(lowerTrim)
  @IsString()
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ description: DATE_DESCRIPTION })
  @IsOptional()
  @IsISO8601({ strict: true })
  startDate?: string;

  @ApiPropertyOptional({ description: DATE_DESCRIPTION })
  @IsOptional()
  @IsISO8601({ strict: true })
  endDate?: string;

  @ApiPropertyOptional({
    maxLength: SEARCH_MAX_LENGTH,
    description: 'Case-insensitive substring of the subject, the message or the e-mail',
  })
  @IsOptional()
  @IsString()
  @MaxLength(SEARCH_MAX_LENGTH)
  search?: string;

  @ApiPropertyOptional({
    enum: TICKET_SORT_FIELDS,
    default: 'createdAt',
    description: 'priority sorts by urgency (low < normal < high < urgent), status by workflow order',
  })
  @IsOptional()
  @IsIn(TICKET_SORT_FIELDS)
  sortBy: TicketSortField = 'createdAt';

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @IsOptional()
  @IsIn(SORT_ORDERS)
  sortOrder: (typeof SORT_ORDERS)[number] = 'desc';
}

/** `GET /tickets`: the app list's query plus `appId`. */
export class ListTicketsQuery extends ListAppTicketsQuery {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100) appId?: string;
}

/** `GET /{appId}/tickets/stats`. */
export class TicketStatsQuery extends DateRangeQuery {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100) shopId?: string;
}
