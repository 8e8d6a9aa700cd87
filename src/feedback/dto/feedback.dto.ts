import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PaginationQueryDto, SORT_ORDERS, type SortOrderName } from '../../common/pagination/pagination';
import { PRIORITIES, type Priority } from '../../common/priority';
import {
  FEEDBACK_SORT_FIELDS,
  FEEDBACK_STATUSES,
  FEEDBACK_TYPES,
  type Feedback,
  type FeedbackSortField,
  type FeedbackStatus,
  type FeedbackType,
  MESSAGE_MAX,
  SUBJECT_MAX,
} from '../schemas/feedback.schema';
import { IsEmailAddress } from '../../common/validation/email-address';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateFeedbackDto {
  @ApiProperty({ enum: FEEDBACK_TYPES }) @IsIn(FEEDBACK_TYPES) type: FeedbackType;

  @ApiProperty({ maxLength: SUBJECT_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(SUBJECT_MAX)
  subject: string;

  @ApiProperty({ maxLength: MESSAGE_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(MESSAGE_MAX)
  message: string;

  @ApiPropertyOptional({ format: 'email' }) @IsOptional() @IsEmailAddress() email?: string;
}

export class UpdateFeedbackDto {
  @ApiPropertyOptional({ enum: FEEDBACK_TYPES }) @IsOptional() @IsIn(FEEDBACK_TYPES) type?: FeedbackType;

  @ApiPropertyOptional({ maxLength: SUBJECT_MAX })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(SUBJECT_MAX)
  subject?: string;

  @ApiPropertyOptional({ maxLength: MESSAGE_MAX })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(MESSAGE_MAX)
  message?: string;
}

export class FeedbackStatusDto {
  @ApiProperty({ enum: FEEDBACK_STATUSES }) @IsIn(FEEDBACK_STATUSES) status: FeedbackStatus;
}

export class FeedbackPriorityDto {
  @ApiProperty({ enum: PRIORITIES }) @IsIn(PRIORITIES) priority: Priority;
}

export class ListFeedbackQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: FEEDBACK_TYPES }) @IsOptional() @IsIn(FEEDBACK_TYPES) type?: FeedbackType;
  @ApiPropertyOptional({ enum: FEEDBACK_STATUSES })
  @IsOptional()
  @IsIn(FEEDBACK_STATUSES)
  status?: FeedbackStatus;
  @ApiPropertyOptional({ enum: PRIORITIES }) @IsOptional() @IsIn(PRIORITIES) priority?: Priority;

  @ApiPropertyOptional({ enum: FEEDBACK_SORT_FIELDS, default: 'createdAt' })
  @IsOptional()
  @IsIn(FEEDBACK_SORT_FIELDS)
  sortBy: FeedbackSortField = 'createdAt';

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @IsOptional()
  @IsIn(SORT_ORDERS)
  sortOrder: SortOrderName = 'desc';
}

export class FeedbackView {
  @ApiProperty() _id: string;
  @ApiProperty() appId: string;
  @ApiProperty({ enum: FEEDBACK_TYPES }) type: FeedbackType;
  @ApiProperty() subject: string;
  @ApiProperty() message: string;
  @ApiPropertyOptional({ format: 'email' }) email?: string;
  @ApiProperty({ enum: FEEDBACK_STATUSES }) status: FeedbackStatus;
  @ApiProperty({ enum: PRIORITIES }) priority: Priority;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export class FeedbackStats {
  @ApiProperty() total: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) byType: Record<string, number>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) byStatus: Record<
    string,
    number
  >;
}

export function toFeedbackView(feedback: Feedback): FeedbackView {
  return {
    _id: String(feedback._id),
    appId: feedback.appId,
    type: feedback.type,
    subject: feedback.subject,
    message: feedback.message,
    // Omitted when absent: a create with `email: null` (allowed as "not given") stores null.
    email: feedback.email ?? undefined,
    status: feedback.status,
    priority: feedback.priority,
    createdAt: feedback.createdAt,
    updatedAt: feedback.updatedAt,
  };
}
