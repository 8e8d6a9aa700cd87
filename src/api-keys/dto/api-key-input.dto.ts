import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsDate,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinDate,
} from 'class-validator';
import { APP_ID_PATTERN } from '../../apps/schemas/app.schema';
import { Omittable } from '../../common/validation/omittable.decorator';
import { PaginationQueryDto, SORT_ORDERS } from '../../common/pagination/pagination';
import { AllowedOriginsProperty } from '../../common/validation/allowed-origins.decorator';
import { BooleanQuery } from '../../common/validation/boolean-query.decorator';

export const SEARCH_MAX_LENGTH = 100;
export const API_KEY_SORT_FIELDS = [
  'createdAt',
  'updatedAt',
  'name',
  'appId',
  'lastUsed',
  'expiresAt',
] as const;
export type ApiKeySortField = (typeof API_KEY_SORT_FIELDS)[number];

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** `null` clears the expiry on update; a string becomes a Date for validation. */
const toDate = ({ value }: { value: unknown }) =>
  value === null || value === undefined ? value : typeof value === 'string' ? new Date(value) : value;

export class CreateApiKeyDto {
  @ApiProperty({
    pattern: APP_ID_PATTERN.source,
    example: 'my-shop',
    description: 'An existing app (404 otherwise)',
  })
  @IsString()
  @Matches(APP_ID_PATTERN)
  @MaxLength(64)
  appId: string;

  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Shop backend' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ maxLength: 500 })
  @Omittable()
  @IsString()
  @MaxLength(500)
  description?: string;

  @AllowedOriginsProperty('When set, a request whose Origin header is not listed is refused (403)')
  allowedOrigins?: string[];

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'In the future; the key is refused (403) after it',
  })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'expiresAt must be an ISO 8601 date-time' })
  @MinDate(() => new Date(), { message: 'expiresAt must be in the future' })
  expiresAt?: Date;
}

export class UpdateApiKeyDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100 })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  @ApiPropertyOptional({ maxLength: 500, nullable: true, description: 'null clears it' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @AllowedOriginsProperty('Replaces the list; an empty list lifts the Origin restriction')
  allowedOrigins?: string[];

  @ApiPropertyOptional() @IsOptional() @IsBoolean() isActive?: boolean;

  @ApiPropertyOptional({ format: 'date-time', nullable: true, description: 'null removes the expiry' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: Date | null;
}

export class ApiKeyStatsQuery {
  @ApiPropertyOptional({ description: 'Only the keys of this app' })
  @IsOptional()
  @IsString()
  @Matches(APP_ID_PATTERN)
  @MaxLength(64)
  appId?: string;
}

export class ListApiKeysQuery extends PaginationQueryDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(APP_ID_PATTERN)
  @MaxLength(64)
  appId?: string;

  @BooleanQuery() isActive?: boolean;

  @ApiPropertyOptional({
    maxLength: SEARCH_MAX_LENGTH,
    description: 'Case-insensitive, in name and description',
  })
  @IsOptional()
  @IsString()
  @MaxLength(SEARCH_MAX_LENGTH)
  search?: string;

  @ApiPropertyOptional({ enum: API_KEY_SORT_FIELDS, default: 'createdAt' })
  @IsOptional()
  @IsIn(API_KEY_SORT_FIELDS)
  sortBy: ApiKeySortField = 'createdAt';

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @IsOptional()
  @IsIn(SORT_ORDERS)
  sortOrder: 'asc' | 'desc' = 'desc';
}
