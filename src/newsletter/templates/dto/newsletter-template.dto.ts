import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { Omittable } from '../../../common/validation/omittable.decorator';
import {
  TEMPLATE_CONTENT_MAX,
  TEMPLATE_NAME_MAX,
  TEMPLATE_SUBJECT_MAX,
  type NewsletterTemplate,
} from '../schemas/newsletter-template.schema';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateNewsletterTemplateDto {
  @ApiProperty({ maxLength: TEMPLATE_NAME_MAX })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_NAME_MAX)
  name: string;

  @ApiProperty({ maxLength: TEMPLATE_SUBJECT_MAX, description: 'Handlebars, like the campaign subject' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_SUBJECT_MAX)
  subject: string;

  @ApiProperty({ maxLength: TEMPLATE_CONTENT_MAX, description: 'Handlebars HTML' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_CONTENT_MAX)
  htmlContent: string;

  @ApiPropertyOptional({
    maxLength: TEMPLATE_CONTENT_MAX,
    description: 'Plain-text part; generated from the HTML when absent',
  })
  @Omittable()
  @IsString()
  @MaxLength(TEMPLATE_CONTENT_MAX)
  textContent?: string;
}

export class UpdateNewsletterTemplateDto {
  @ApiPropertyOptional({ maxLength: TEMPLATE_NAME_MAX })
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ maxLength: TEMPLATE_SUBJECT_MAX })
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_SUBJECT_MAX)
  subject?: string;

  @ApiPropertyOptional({ maxLength: TEMPLATE_CONTENT_MAX })
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(TEMPLATE_CONTENT_MAX)
  htmlContent?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: TEMPLATE_CONTENT_MAX,
    description: '`null` removes it (the text part is then generated from the HTML)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(TEMPLATE_CONTENT_MAX)
  textContent?: string | null;

  @ApiPropertyOptional({ description: 'An inactive template cannot fill a new campaign' })
  @Omittable()
  @IsBoolean()
  isActive?: boolean;
}

export class NewsletterTemplateView {
  @ApiProperty() _id: string;
  @ApiProperty() name: string;
  @ApiProperty() subject: string;
  @ApiProperty() htmlContent: string;
  @ApiProperty({ type: String, nullable: true }) textContent: string | null;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ description: 'Id of the admin user who created it' }) createdBy: string;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export function toNewsletterTemplateView(template: NewsletterTemplate): NewsletterTemplateView {
  return {
    _id: String(template._id),
    name: template.name,
    subject: template.subject,
    htmlContent: template.htmlContent,
    textContent: template.textContent ?? null,
    isActive: template.isActive,
    createdBy: template.createdBy,
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}
