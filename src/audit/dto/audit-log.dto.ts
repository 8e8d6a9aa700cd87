import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PaginationQueryDto } from '../../common/pagination/pagination';
import { AUDIT_OUTCOMES, type AuditRecord } from '../schemas/audit-record.schema';

export class AuditLogQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ description: "The acting staff member: a user's id or e-mail address" })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  actor?: string;

  @ApiPropertyOptional({ description: 'An action such as `apiKey.create` or `auth.login`' })
  @IsOptional()
  @Matches(/^[A-Za-z]+\.[A-Za-z]+$/, {
    message: 'action must be of the form target.verb, e.g. apiKey.create',
  })
  @MaxLength(64)
  action?: string;

  @ApiPropertyOptional({ description: 'Records of one app' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  appId?: string;

  @ApiPropertyOptional({ description: 'Records about one object (user, key, contact… id)' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  targetId?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Records written at or after this time' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date' })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Records written before this time' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date' })
  to?: string;
}

export class AuditRecordView {
  @ApiProperty() _id: string;
  @ApiProperty({ description: 'Position in the hash chain' }) seq: number;
  @ApiProperty({ format: 'date-time' }) at: Date;
  @ApiPropertyOptional() actorId?: string;
  @ApiPropertyOptional({ format: 'email' }) actorEmail?: string;
  @ApiPropertyOptional() role?: string;
  @ApiProperty({ example: 'apiKey.create' }) action: string;
  @ApiPropertyOptional({ example: 'apiKey' }) targetType?: string;
  @ApiPropertyOptional() targetId?: string;
  @ApiPropertyOptional() appId?: string;
  @ApiPropertyOptional() ip?: string;
  @ApiPropertyOptional() requestId?: string;
  @ApiProperty({ type: [String], description: 'Names of the fields sent, never their values' })
  fields: string[];
  @ApiProperty({ enum: AUDIT_OUTCOMES }) outcome: string;
  @ApiProperty({ description: 'The HTTP status answered' }) status: number;
  @ApiProperty() prevHash: string;
  @ApiProperty() hash: string;
}

/** The one place a stored record becomes a response. */
export function toAuditRecordView(record: AuditRecord): AuditRecordView {
  return {
    _id: String(record._id),
    seq: record.seq,
    at: record.at,
    actorId: record.actorId,
    actorEmail: record.actorEmail,
    role: record.role,
    action: record.action,
    targetType: record.targetType,
    targetId: record.targetId,
    appId: record.appId,
    ip: record.ip,
    requestId: record.requestId,
    fields: record.fields ?? [],
    outcome: record.outcome,
    status: record.status,
    prevHash: record.prevHash,
    hash: record.hash,
  };
}
