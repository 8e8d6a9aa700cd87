import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Matches, MaxLength } from 'class-validator';
import { APP_ID_PATTERN } from '../../apps/schemas/app.schema';
import type { DnsRecord } from '../dns-records';
import {
  RECORD_PURPOSES,
  type DomainState,
  type RecordPurpose,
  type RecordState,
  type SenderDomain,
} from '../schemas/sender-domain.schema';

/** Two or more hostname labels, the last a letter label: a name mail can be sent from. */
const DOMAIN_PATTERN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export class CreateSenderDomainDto {
  @ApiProperty({ example: 'lumen.example', maxLength: 253, pattern: DOMAIN_PATTERN.source })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsString()
  @MaxLength(253)
  @Matches(DOMAIN_PATTERN, { message: 'domain must be a domain name such as lumen.example' })
  domain: string;

  @ApiProperty({ example: 'lumen-club', pattern: APP_ID_PATTERN.source, maxLength: 64 })
  @IsString()
  @MaxLength(64)
  @Matches(APP_ID_PATTERN, { message: 'appId must be an app id' })
  appId: string;
}

export class DnsRecordView {
  @ApiProperty({ enum: RECORD_PURPOSES }) purpose: RecordPurpose;
  @ApiProperty({ enum: ['TXT', 'CNAME'] }) type: 'TXT' | 'CNAME';
  @ApiProperty({ example: 's202611-a1b2c3._domainkey.lumen.example' }) name: string;
  @ApiProperty({ example: 'v=DKIM1; k=rsa; p=MIIBIjAN…' }) value: string;
  @ApiPropertyOptional({ enum: ['pending', 'verified', 'missing', 'mismatch', 'unknown'] })
  state?: RecordState;
  @ApiPropertyOptional({
    enum: ['signing', 'next', 'previous'],
    description: 'DKIM records: the key that signs, a rotation’s next key, or the key it replaced',
  })
  key?: 'signing' | 'next' | 'previous';
  @ApiPropertyOptional({
    description: 'The replaced key’s record after its overlap (DKIM_KEY_OVERLAP_DAYS): delete it from DNS',
  })
  removable?: boolean;
}

export class SenderDomainView {
  @ApiProperty({ example: '6561f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'lumen.example' }) domain: string;
  @ApiProperty({ example: 'lumen-club' }) appId: string;
  @ApiProperty({ enum: ['pending', 'verified', 'failed'] }) state: DomainState;
  @ApiProperty({ description: 'The selector of the key that signs' }) selector: string;
  @ApiProperty({ type: [DnsRecordView] }) records: DnsRecordView[];
  @ApiPropertyOptional({ format: 'date-time' }) checkedAt?: Date;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
}

/** Each record with the state the last check found (`pending` before the first). */
export function toSenderDomainView(
  domain: SenderDomain,
  records: (DnsRecord & { state?: RecordState })[],
): SenderDomainView {
  return {
    id: String(domain._id),
    domain: domain.domain,
    appId: domain.appId,
    state: domain.state,
    selector: domain.dkim.selector,
    records: records.map((record) => ({
      ...record,
      state: record.state ?? storedState(domain, record) ?? 'pending',
    })),
    checkedAt: domain.checkedAt,
    createdAt: domain.createdAt,
  };
}

/** What the last check found for a record: DKIM records by their selector (a rotation lists several). */
function storedState(domain: SenderDomain, record: DnsRecord): RecordState | undefined {
  if (record.purpose !== 'dkim') return domain.recordStates?.[record.purpose];
  const byKey = domain.keyStates?.[record.name.split('.')[0]];
  return byKey ?? (record.key === 'signing' ? domain.recordStates?.dkim : undefined);
}
