import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PaginationQueryDto } from '../../common/pagination/pagination';
import { PRIORITIES, type Priority } from '../../common/priority';
import {
  CATEGORY_MAX,
  DESCRIPTION_MAX,
  TITLE_MAX,
  WANT_SORTS,
  WANT_STATUSES,
  type Want,
  type WantSort,
  type WantStatus,
} from '../schemas/want.schema';
import { IsEmailAddress } from '../../common/validation/email-address';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateWantDto {
  @ApiProperty({ maxLength: TITLE_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TITLE_MAX)
  title: string;

  @ApiProperty({ maxLength: DESCRIPTION_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(DESCRIPTION_MAX)
  description: string;

  @ApiProperty({ maxLength: CATEGORY_MAX, description: 'Free-form category chosen by the app, e.g. `ui`' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CATEGORY_MAX)
  category: string;

  @ApiPropertyOptional({ format: 'email', description: 'Contact of the end user who asks' })
  @IsOptional()
  @IsEmailAddress()
  authorEmail?: string;
}

export class UpdateWantDto {
  @ApiPropertyOptional({ maxLength: TITLE_MAX })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({ maxLength: DESCRIPTION_MAX })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(DESCRIPTION_MAX)
  description?: string;

  @ApiPropertyOptional({ maxLength: CATEGORY_MAX })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CATEGORY_MAX)
  category?: string;
}

export class WantStatusDto {
  @ApiProperty({ enum: WANT_STATUSES }) @IsIn(WANT_STATUSES) status: WantStatus;
}

export class WantPriorityDto {
  @ApiProperty({ enum: PRIORITIES }) @IsIn(PRIORITIES) priority: Priority;
}

export class ListWantsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: WANT_STATUSES }) @IsOptional() @IsIn(WANT_STATUSES) status?: WantStatus;

  @ApiPropertyOptional({ maxLength: CATEGORY_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(CATEGORY_MAX)
  category?: string;

  @ApiPropertyOptional({ enum: WANT_SORTS, default: 'votes' })
  @IsOptional()
  @IsIn(WANT_SORTS)
  sort: WantSort = 'votes';
}

/** The admin view: every field, with priority. */
export class WantAdminView {
  @ApiProperty() _id: string;
  @ApiProperty() appId: string;
  @ApiProperty() title: string;
  @ApiProperty() description: string;
  @ApiProperty() category: string;
  @ApiProperty({ enum: WANT_STATUSES }) status: WantStatus;
  @ApiProperty({ enum: PRIORITIES }) priority: Priority;
  @ApiProperty() voteCount: number;
  @ApiPropertyOptional() authorEmail?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

/** The public view: no priority, with whether the calling end user has voted. */
export class WantPublicView extends OmitType(WantAdminView, ['priority'] as const) {
  @ApiProperty() hasVoted: boolean;
}

/** A want as one voter sees it on the public board: with whether they have voted for it. */
export interface WantForVoter {
  want: Want;
  hasVoted: boolean;
}

export class VoteResult {
  @ApiProperty() voteCount: number;
  @ApiProperty() hasVoted: boolean;
}

export class WantStats {
  @ApiProperty() total: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { open: 3, planned: 1 },
  })
  byStatus: Record<string, number>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) byCategory: Record<
    string,
    number
  >;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) byPriority: Record<
    string,
    number
  >;
}

export function toWantAdminView(want: Want): WantAdminView {
  return {
    _id: String(want._id),
    appId: want.appId,
    title: want.title,
    description: want.description,
    category: want.category,
    status: want.status,
    priority: want.priority,
    voteCount: want.voteCount,
    // Omitted when absent: a create with `authorEmail: null` (allowed as "not given") stores null.
    authorEmail: want.authorEmail ?? undefined,
    createdAt: want.createdAt,
    updatedAt: want.updatedAt,
  };
}

export function toWantPublicView(want: Want, hasVoted: boolean): WantPublicView {
  const { priority: _priority, ...rest } = toWantAdminView(want);
  return { ...rest, hasVoted };
}
