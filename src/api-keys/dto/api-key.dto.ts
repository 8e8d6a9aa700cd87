import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ApiKey } from '../schemas/api-key.schema';

/** An API key as lists, updates and revocation show it: never the secret. */
export class ApiKeyView {
  @ApiProperty() _id: string;
  @ApiProperty() appId: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ type: [String] }) allowedOrigins: string[];
  @ApiProperty() isActive: boolean;
  @ApiPropertyOptional({ format: 'date-time' }) lastUsed?: Date;
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'null or absent: never expires',
  })
  expiresAt?: Date | null;
  @ApiProperty({ description: 'Id of the admin user who created the key' }) createdBy: string;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

/** On create and get-by-id: the record with its full secret value. */
export class ApiKeyWithSecretView extends ApiKeyView {
  @ApiProperty({ example: 'sk_my-shop_9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' })
  key: string;
}

/** The regenerate response (docs/api/staff.md). */
export class RegeneratedApiKeyView {
  @ApiProperty() _id: string;
  @ApiProperty() key: string;
  @ApiProperty() appId: string;
  @ApiProperty() name: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
}

export class ApiKeyAppStats {
  @ApiProperty() total: number;
  @ApiProperty() active: number;
  @ApiProperty() inactive: number;
  @ApiProperty() expired: number;
}

export class ApiKeyStatsView extends ApiKeyAppStats {
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ApiKeyAppStats' },
    description: 'The same counts per appId',
  })
  byApp: Record<string, ApiKeyAppStats>;
}

export function toApiKeyView(key: ApiKey): ApiKeyView {
  return {
    _id: String(key._id),
    appId: key.appId,
    name: key.name,
    description: key.description,
    allowedOrigins: key.allowedOrigins ?? [],
    isActive: key.isActive,
    lastUsed: key.lastUsed,
    expiresAt: key.expiresAt,
    createdBy: key.createdBy,
    createdAt: key.createdAt,
    updatedAt: key.updatedAt,
  };
}

export function toApiKeyWithSecretView(key: ApiKey, value: string): ApiKeyWithSecretView {
  return { ...toApiKeyView(key), key: value };
}

export function toRegeneratedApiKeyView(key: ApiKey, value: string): RegeneratedApiKeyView {
  return {
    _id: String(key._id),
    key: value,
    appId: key.appId,
    name: key.name,
    isActive: key.isActive,
    createdAt: key.createdAt,
  };
}
