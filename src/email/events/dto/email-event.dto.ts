import { ApiParam, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PaginationQueryDto } from '../../../common/pagination/pagination';
import { EMAIL_STREAMS, type EmailStream } from '../../jobs/schemas/email-job.schema';
import {
  BOUNCE_TYPES,
  EMAIL_EVENT_TYPES,
  type BounceType,
  type EmailEvent,
  type EmailEventType,
} from '../../tracking/schemas/email-event.schema';

/** Campaign ids and app ids as the queue stores them. */
export const CAMPAIGN_ID = /^[\w.:-]{1,100}$/;
/** A Message-ID (`<job id>@<domain>`) or a tracking message key (`campaign:<id>:<contact>`). */
export const MESSAGE_ID = /^[\w.@:+=-]{1,300}$/;

/**
 * The path parameters of campaign and message ids, with their patterns: not ObjectIds (a job's campaign id is
 * any tag; a Message-ID is `<job id>@<domain>`), and one that does not match is answered 404.
 */
export const ApiCampaignIdParam = () =>
  ApiParam({
    name: 'campaignId',
    description: 'A newsletter campaign id, or the campaign tag e-mail jobs were queued with',
    schema: { type: 'string', pattern: CAMPAIGN_ID.source },
  });
export const ApiMessageIdParam = () =>
  ApiParam({
    name: 'messageId',
    description: 'The Message-ID recorded when the message was sent, or a tracking message key',
    schema: { type: 'string', pattern: MESSAGE_ID.source },
  });

export class ListEmailEventsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ description: 'A contact (person) id' })
  @IsOptional()
  @IsMongoId({ message: 'contactId must be a contact id' })
  contactId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(CAMPAIGN_ID, { message: 'campaignId must be a campaign id' })
  campaignId?: string;

  @ApiPropertyOptional({ description: 'Message-ID recorded when the message was sent' })
  @IsOptional()
  @IsString()
  @Matches(MESSAGE_ID, { message: 'messageId must be a message id' })
  messageId?: string;

  @ApiPropertyOptional({ enum: EMAIL_EVENT_TYPES })
  @IsOptional()
  @IsIn(EMAIL_EVENT_TYPES)
  type?: EmailEventType;

  @ApiPropertyOptional({ description: '`primary`, `tracking`, `smtp`, `outbox`' })
  @IsOptional()
  @IsString()
  @Matches(/^[\w.-]{1,40}$/, { message: 'provider must be a provider name' })
  provider?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[a-z0-9][a-z0-9-]*$/, { message: 'appId must be an app id' })
  appId?: string;

  @ApiPropertyOptional({
    enum: EMAIL_STREAMS,
    description:
      'The message stream; alone, within an app, a message or a person (not with campaignId, type or ' +
      'provider: 400). Events recorded before streams were kept on events have none and never match',
  })
  @IsOptional()
  @IsIn(EMAIL_STREAMS, { message: `stream must be one of: ${EMAIL_STREAMS.join(', ')}` })
  stream?: EmailStream;
}

export class EmailEventView {
  @ApiProperty() _id: string;
  @ApiProperty({ type: String, nullable: true }) appId: string | null;
  @ApiProperty({ type: String, nullable: true }) contactId: string | null;
  @ApiProperty({ type: String, nullable: true }) messageId: string | null;
  @ApiProperty({ type: String, nullable: true }) campaignId: string | null;
  @ApiProperty({ example: 'primary' }) provider: string;
  @ApiProperty({ enum: EMAIL_EVENT_TYPES }) type: EmailEventType;
  @ApiProperty({
    enum: EMAIL_STREAMS,
    nullable: true,
    description: 'The message stream; null for an event recorded before streams were kept on events',
  })
  stream: EmailStream | null;
  @ApiProperty({
    description: 'A machine (privacy proxy, link scanner), not counted as a human open or click',
  })
  automated: boolean;
  @ApiPropertyOptional({ enum: BOUNCE_TYPES }) bounceType?: BounceType;
  @ApiPropertyOptional() url?: string;
  @ApiPropertyOptional() linkIndex?: number;
  @ApiProperty() createdAt: Date;
}

export class MessageEventView {
  @ApiProperty() _id: string;
  @ApiProperty({ enum: EMAIL_EVENT_TYPES }) type: EmailEventType;
  @ApiProperty() provider: string;
  @ApiProperty() createdAt: Date;
}

export class CampaignEventStats {
  @ApiProperty() sent: number;
  @ApiProperty() delivered: number;
  @ApiProperty({ description: 'Human opens (automated ones excluded)' }) opened: number;
  @ApiProperty({ description: 'Human clicks (automated ones excluded)' }) clicked: number;
  @ApiProperty() bounced: number;
  @ApiProperty({ description: 'Unique human opens / delivered (sent when no delivery is reported), 0..1' })
  openRate: number;
  @ApiProperty({ description: 'Unique human clicks / delivered (sent when no delivery is reported), 0..1' })
  clickRate: number;
}

export function toEmailEventView(event: EmailEvent): EmailEventView {
  return {
    _id: String(event._id),
    appId: event.appId ?? null,
    contactId: event.contactId ?? null,
    messageId: event.messageId ?? null,
    campaignId: event.campaignId ?? null,
    provider: event.provider,
    type: event.type,
    stream: event.stream ?? null,
    automated: event.automated ?? false,
    ...(event.bounceType ? { bounceType: event.bounceType } : {}),
    ...(event.url ? { url: event.url } : {}),
    ...(typeof event.linkIndex === 'number' ? { linkIndex: event.linkIndex } : {}),
    createdAt: event.createdAt,
  };
}
