import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  LOCALES,
  type Locale,
  SOURCE_MAX,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
} from '../../../contacts/schemas/contact.schema';
import { TOPIC_KEY_PATTERN, TOPICS_MAX } from '../../../contacts/topics/topic-rules';
import { MAX_PAGE_SIZE } from '../../../common/pagination/pagination';
import { IntegerQuery } from '../../../common/validation/integer-query.decorator';
import { Omittable } from '../../../common/validation/omittable.decorator';
import type { Segment, SegmentFilter } from '../schemas/segment.schema';

export const SEGMENT_NAME_MAX = 200;
/** Engagement windows: up to a year (events older than their retention are gone anyway). */
export const ENGAGEMENT_DAYS_MAX = 366;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class SegmentFilterDto {
  @ApiPropertyOptional({
    enum: SUBSCRIPTION_STATUSES,
    description: 'The subscription’s status; `active` when absent',
  })
  @Omittable()
  @IsIn(SUBSCRIPTION_STATUSES)
  status?: SubscriptionStatus;

  @ApiPropertyOptional({
    maxLength: SOURCE_MAX,
    description: 'Where the subscription came from (`joinlist`, `import`, …)',
  })
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(SOURCE_MAX)
  source?: string;

  @ApiPropertyOptional({ enum: LOCALES })
  @Omittable()
  @IsIn(LOCALES)
  locale?: Locale;

  @ApiPropertyOptional({ format: 'date-time', description: 'Subscribed before this time' })
  @Omittable()
  @IsISO8601({ strict: true }, { message: 'filter.subscribedBefore must be an ISO 8601 date-time' })
  subscribedBefore?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Subscribed at or after this time' })
  @Omittable()
  @IsISO8601({ strict: true }, { message: 'filter.subscribedAfter must be an ISO 8601 date-time' })
  subscribedAfter?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: TOPICS_MAX,
    description: 'Topic keys: people who dropped none of them',
  })
  @Omittable()
  @IsArray()
  @ArrayMaxSize(TOPICS_MAX)
  @IsString({ each: true })
  @Matches(TOPIC_KEY_PATTERN, { each: true, message: 'filter.keepsTopics must hold topic keys' })
  keepsTopics?: string[];

  @ApiPropertyOptional({
    minimum: 1,
    maximum: ENGAGEMENT_DAYS_MAX,
    description: 'Opened any campaign in the last N days',
  })
  @Omittable()
  @IsInt()
  @Min(1)
  @Max(ENGAGEMENT_DAYS_MAX)
  openedWithinDays?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: ENGAGEMENT_DAYS_MAX,
    description: 'Clicked in any campaign in the last N days',
  })
  @Omittable()
  @IsInt()
  @Min(1)
  @Max(ENGAGEMENT_DAYS_MAX)
  clickedWithinDays?: number;

  @ApiPropertyOptional({ description: 'true: people with no open recorded (within the events’ retention)' })
  @Omittable()
  @IsBoolean()
  neverOpened?: boolean;
}

export class CreateSegmentDto {
  @ApiProperty({ maxLength: SEGMENT_NAME_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(SEGMENT_NAME_MAX)
  name: string;

  @ApiProperty({
    type: SegmentFilterDto,
    description: 'Every field given narrows; `{}`: every active subscriber',
  })
  @IsDefined({ message: 'filter is required ({} for every active subscriber)' })
  @ValidateNested()
  @Type(() => SegmentFilterDto)
  filter: SegmentFilterDto;
}

export class UpdateSegmentDto {
  @ApiPropertyOptional({ maxLength: SEGMENT_NAME_MAX })
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(SEGMENT_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ type: SegmentFilterDto, description: 'Replaces the whole filter' })
  @Omittable()
  @ValidateNested()
  @Type(() => SegmentFilterDto)
  filter?: SegmentFilterDto;
}

export class SegmentPreviewQuery {
  @IntegerQuery({ min: 1, max: MAX_PAGE_SIZE, default: 20, description: 'Members to list' })
  limit: number = 20;
}

export class SegmentFilterView {
  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES }) status?: SubscriptionStatus;
  @ApiPropertyOptional() source?: string;
  @ApiPropertyOptional({ enum: LOCALES }) locale?: Locale;
  @ApiPropertyOptional({ format: 'date-time' }) subscribedBefore?: Date;
  @ApiPropertyOptional({ format: 'date-time' }) subscribedAfter?: Date;
  @ApiPropertyOptional({ type: [String] }) keepsTopics?: string[];
  @ApiPropertyOptional() openedWithinDays?: number;
  @ApiPropertyOptional() clickedWithinDays?: number;
  @ApiPropertyOptional() neverOpened?: boolean;
}

export class SegmentView {
  @ApiProperty() _id: string;
  @ApiProperty() appId: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: SegmentFilterView }) filter: SegmentFilterView;
  @ApiProperty({ type: String, nullable: true }) createdBy: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export class SegmentPersonView {
  @ApiProperty() _id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty({ type: String, nullable: true }) lastName: string | null;
}

export class SegmentPreviewView {
  @ApiProperty({ description: 'Members counted, up to the count cap' }) count: number;
  @ApiProperty({
    description: 'true: the count stopped at its cap or its read budget (there may be more members)',
  })
  countCapped: boolean;
  @ApiProperty({ type: [SegmentPersonView], description: 'The first `limit` members in id order' })
  people: SegmentPersonView[];
}

/** The stored filter of a validated DTO (dates as dates; fields not given are left out). */
export function toSegmentFilter(dto: SegmentFilterDto): SegmentFilter {
  const { subscribedBefore, subscribedAfter, ...rest } = dto;
  return {
    ...rest,
    ...(subscribedBefore ? { subscribedBefore: new Date(subscribedBefore) } : {}),
    ...(subscribedAfter ? { subscribedAfter: new Date(subscribedAfter) } : {}),
  };
}

export function toSegmentView(segment: Segment): SegmentView {
  const filter = segment.filter ?? {};
  return {
    _id: String(segment._id),
    appId: segment.appId,
    name: segment.name,
    filter: Object.fromEntries(
      Object.entries(filter).filter(([, value]) => value !== undefined && value !== null),
    ),
    createdBy: segment.createdBy ?? null,
    createdAt: segment.createdAt,
    updatedAt: segment.updatedAt,
  };
}
