import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsIn,
  IsISO8601,
  IsMongoId,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

/** A sample name's longest (the contact record's names are as long). */
const SAMPLE_NAME_MAX = 100;
import { TOPIC_KEY_PATTERN } from '../../../contacts/topics/topic-rules';
import { PaginationQueryDto } from '../../../common/pagination/pagination';
import { Omittable } from '../../../common/validation/omittable.decorator';
import {
  type Campaign,
  CAMPAIGN_CONTENT_MAX,
  CAMPAIGN_NAME_MAX,
  CAMPAIGN_STATUSES,
  CAMPAIGN_SUBJECT_MAX,
  type CampaignStatus,
} from '../schemas/campaign.schema';
import { IsEmailAddress } from '../../../common/validation/email-address';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** Subject and HTML may be left out when a template fills them. */
const unlessTemplate = ValidateIf(
  (dto: { templateId?: string }, value: unknown) => value !== undefined || dto.templateId === undefined,
);

export class CreateCampaignDto {
  @ApiProperty({ maxLength: CAMPAIGN_NAME_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CAMPAIGN_NAME_MAX)
  name: string;

  @ApiPropertyOptional({
    maxLength: CAMPAIGN_SUBJECT_MAX,
    description: 'Handlebars; required unless `templateId` names a template that supplies it',
  })
  @unlessTemplate
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CAMPAIGN_SUBJECT_MAX)
  subject?: string;

  @ApiPropertyOptional({
    maxLength: CAMPAIGN_CONTENT_MAX,
    description:
      'Handlebars HTML (`{{firstName}}`, `{{unsubscribeUrl}}`, …); required unless `templateId` names a template that supplies it',
  })
  @unlessTemplate
  @IsString()
  @IsNotEmpty()
  @MaxLength(CAMPAIGN_CONTENT_MAX)
  htmlContent?: string;

  @ApiPropertyOptional({
    maxLength: CAMPAIGN_CONTENT_MAX,
    description: 'Plain-text part; generated from the HTML when absent',
  })
  @Omittable()
  @IsString()
  @MaxLength(CAMPAIGN_CONTENT_MAX)
  textContent?: string;

  @ApiPropertyOptional({
    description: 'A newsletter template of the same app: fills what the body leaves out',
  })
  @Omittable()
  @IsMongoId()
  templateId?: string;

  @ApiPropertyOptional({
    description:
      'A segment of the same app: the campaign goes to its members (absent: every active subscriber)',
  })
  @Omittable()
  @IsMongoId()
  segmentId?: string;

  @ApiPropertyOptional({
    pattern: TOPIC_KEY_PATTERN.source,
    description: 'A newsletter topic of the app: people who dropped it are skipped',
  })
  @Omittable()
  @IsString()
  @Matches(TOPIC_KEY_PATTERN, { message: 'topic must be a topic key' })
  topic?: string;
}

export class UpdateCampaignDto {
  @ApiPropertyOptional({ maxLength: CAMPAIGN_NAME_MAX })
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CAMPAIGN_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ maxLength: CAMPAIGN_SUBJECT_MAX })
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CAMPAIGN_SUBJECT_MAX)
  subject?: string;

  @ApiPropertyOptional({ maxLength: CAMPAIGN_CONTENT_MAX })
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(CAMPAIGN_CONTENT_MAX)
  htmlContent?: string;

  @ApiPropertyOptional({
    maxLength: CAMPAIGN_CONTENT_MAX,
    nullable: true,
    description: 'null: generate from the HTML',
  })
  @IsOptional()
  @IsString()
  @MaxLength(CAMPAIGN_CONTENT_MAX)
  textContent?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'A segment of the app; null: every active subscriber' })
  @IsOptional()
  @IsMongoId()
  segmentId?: string | null;

  @ApiPropertyOptional({ nullable: true, pattern: TOPIC_KEY_PATTERN.source, description: 'null: no topic' })
  @IsOptional()
  @IsString()
  @Matches(TOPIC_KEY_PATTERN, { message: 'topic must be a topic key' })
  topic?: string | null;
}

/** At most a year ahead: a schedule is a plan for this campaign, not a reminder. */
export const SCHEDULE_MAX_AHEAD_MS = 366 * 86_400_000;

export class ScheduleCampaignDto {
  @ApiProperty({ format: 'date-time', description: 'In the future, at most a year ahead' })
  @IsISO8601({ strict: true }, { message: 'sendAt must be an ISO 8601 date-time' })
  sendAt: string;
}

export class ListCampaignsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: CAMPAIGN_STATUSES })
  @IsOptional()
  @IsIn(CAMPAIGN_STATUSES)
  status?: CampaignStatus;
}

/** Values a test copy shows for the per-person variables (each else the app's first subscriber's). */
export class SampleVariables {
  @ApiPropertyOptional({ maxLength: SAMPLE_NAME_MAX, example: 'Ada' })
  @Omittable()
  @IsString()
  @MaxLength(SAMPLE_NAME_MAX)
  firstName?: string;

  @ApiPropertyOptional({ maxLength: SAMPLE_NAME_MAX, example: 'Lovelace' })
  @Omittable()
  @IsString()
  @MaxLength(SAMPLE_NAME_MAX)
  lastName?: string;
}

export class TestCampaignDto {
  @ApiProperty({ format: 'email', maxLength: 254 })
  @Transform(trim)
  @IsEmailAddress()
  email: string;

  @ApiPropertyOptional({
    type: SampleVariables,
    description: 'Values for `{{firstName}}` and `{{lastName}}`; absent: the app’s first subscriber’s',
  })
  @Omittable()
  @IsObject()
  @ValidateNested()
  @Type(() => SampleVariables)
  variables?: SampleVariables;
}

export class CampaignStatsView {
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) sent: number;
  @ApiProperty({ type: 'integer' }) failed: number;
}

export class CampaignView {
  @ApiProperty() _id: string;
  @ApiProperty() appId: string;
  @ApiProperty() name: string;
  @ApiProperty() subject: string;
  @ApiProperty() htmlContent: string;
  @ApiProperty({ type: String, nullable: true }) textContent: string | null;
  @ApiProperty({ type: String, nullable: true }) templateId: string | null;
  @ApiProperty({ enum: CAMPAIGN_STATUSES }) status: CampaignStatus;
  @ApiProperty({ type: CampaignStatsView }) @Type(() => CampaignStatsView) stats: CampaignStatsView;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) sentAt: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completedAt: Date | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When a `scheduled` campaign starts (± the worker interval); null when not scheduled',
  })
  scheduledFor: Date | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The segment it goes to; null: every subscriber',
  })
  segmentId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The newsletter topic it is about' })
  topic: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Id of the user who created it' })
  createdBy: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the remaining messages are held (complaint guard); null when not held',
  })
  heldReason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) heldAt: Date | null;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export class CampaignResumeView {
  @ApiProperty({ description: 'Held messages queued again' }) released: number;
  @ApiProperty({ type: CampaignView }) campaign: CampaignView;
}

export class CampaignSendView {
  @ApiProperty({ enum: CAMPAIGN_STATUSES }) status: CampaignStatus;
  @ApiProperty({ description: 'The `email.batch.plan` job (see `/admin/email-jobs`)' }) jobId: string;
}

export class CampaignTestView {
  @ApiProperty({ description: 'The `email.send` job of the test copy' }) jobId: string;
}

export function toCampaignView(campaign: Campaign): CampaignView {
  return {
    _id: String(campaign._id),
    appId: campaign.appId,
    name: campaign.name,
    subject: campaign.subject,
    htmlContent: campaign.htmlContent,
    textContent: campaign.textContent ?? null,
    templateId: campaign.templateId ?? null,
    status: campaign.status,
    stats: {
      total: campaign.stats?.total ?? 0,
      sent: campaign.stats?.sent ?? 0,
      failed: campaign.stats?.failed ?? 0,
    },
    sentAt: campaign.sentAt ?? null,
    completedAt: campaign.completedAt ?? null,
    scheduledFor: campaign.status === 'scheduled' ? (campaign.sendAt ?? null) : null,
    segmentId: campaign.segmentId ?? null,
    topic: campaign.topic ?? null,
    createdBy: campaign.createdBy ?? null,
    heldReason: campaign.heldReason ?? null,
    heldAt: campaign.heldAt ?? null,
    createdAt: campaign.createdAt,
    updatedAt: campaign.updatedAt,
  };
}
