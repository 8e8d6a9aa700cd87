import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsMongoId, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
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
}

export class ListCampaignsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: CAMPAIGN_STATUSES })
  @IsOptional()
  @IsIn(CAMPAIGN_STATUSES)
  status?: CampaignStatus;
}

export class TestCampaignDto {
  @ApiProperty({ format: 'email', maxLength: 254 })
  @Transform(trim)
  @IsEmailAddress()
  email: string;
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
    createdBy: campaign.createdBy ?? null,
    heldReason: campaign.heldReason ?? null,
    heldAt: campaign.heldAt ?? null,
    createdAt: campaign.createdAt,
    updatedAt: campaign.updatedAt,
  };
}
