import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { APP_ID_MAX_LENGTH } from '../../../apps/dto/app-input.dto';
import { APP_ID_PATTERN } from '../../../apps/schemas/app.schema';
import { PaginationQueryDto } from '../../../common/pagination/pagination';
import { BooleanQuery } from '../../../common/validation/boolean-query.decorator';
import { Omittable } from '../../../common/validation/omittable.decorator';
import {
  BODY_MAX,
  type EmailTemplate,
  NAME_MAX,
  SUBJECT_MAX,
  TEMPLATE_LANGUAGES,
  type TemplateLanguage,
  VARIABLE_PATTERN,
  VARIABLES_MAX,
} from '../schemas/email-template.schema';
import { IsEmailAddress } from '../../../common/validation/email-address';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export const SEARCH_MAX = 100;

/** `appId` of a scope: an app id, or `null`/omitted for the global templates. */
const ScopeProperty = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      pattern: APP_ID_PATTERN.source,
      maxLength: APP_ID_MAX_LENGTH,
      description,
    }),
    IsOptional(),
    IsString(),
    Matches(APP_ID_PATTERN),
    MaxLength(APP_ID_MAX_LENGTH),
  );

export class TemplateSenderDto {
  @ApiPropertyOptional({ maxLength: 100 })
  @Omittable()
  @Transform(trim)
  @IsString()
  @MaxLength(100)
  @Matches(/^[^\r\n]*$/, { message: 'sender.name must be one line' })
  name?: string;

  @ApiProperty({ format: 'email' }) @IsEmailAddress() email: string;
}

/** The fields of the input shape other than `appId` and `language` (shared by create, PUT and PATCH). */
class TemplateContentDto {
  @ApiProperty({ minLength: 1, maxLength: NAME_MAX, example: 'welcome' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX)
  name: string;

  @ApiProperty({ maxLength: SUBJECT_MAX, example: 'Welcome, {{firstName}}!' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(SUBJECT_MAX)
  subject: string;

  @ApiProperty({ maxLength: BODY_MAX, example: '<p>Hello {{firstName}}</p>' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(BODY_MAX)
  htmlTemplate: string;

  @ApiProperty({ maxLength: BODY_MAX, example: 'Hello {{firstName}}' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(BODY_MAX)
  textTemplate: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: VARIABLES_MAX,
    example: ['firstName', 'order.total'],
    description: 'Variables the template expects (documentation; missing ones render empty)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(VARIABLES_MAX)
  @ArrayUnique()
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  @Matches(VARIABLE_PATTERN, { each: true })
  variables?: string[];

  @ApiPropertyOptional({ default: true }) @Omittable() @IsBoolean() isActive?: boolean;

  @ApiPropertyOptional({ minimum: 1, default: 1 }) @Omittable() @IsInt() @Min(1) version?: number;

  @ApiPropertyOptional({ type: TemplateSenderDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => TemplateSenderDto)
  sender?: TemplateSenderDto;
}

export class CreateEmailTemplateDto extends TemplateContentDto {
  @ScopeProperty('The app of the template; null or omitted: a global template')
  appId?: string | null;

  @ApiPropertyOptional({ enum: TEMPLATE_LANGUAGES, default: 'en' })
  @Omittable()
  @IsIn(TEMPLATE_LANGUAGES)
  language?: TemplateLanguage;
}

/**
 * PUT: the whole input shape, `language` required too. Omitted optional fields go back to their defaults
 * (`variables` [], `isActive` true, no `sender`); `version` is raised by one unless sent.
 */
export class ReplaceEmailTemplateDto extends TemplateContentDto {
  @ScopeProperty('Must equal the `appId` of the query when sent (a template does not change scope)')
  appId?: string | null;

  @ApiProperty({ enum: TEMPLATE_LANGUAGES }) @IsIn(TEMPLATE_LANGUAGES) language: TemplateLanguage;
}

/** PATCH: the fields sent only; `sender: null` removes the sender; `version` is raised unless sent. */
export class UpdateEmailTemplateDto extends PartialType(ReplaceEmailTemplateDto) {}

export class TemplateScopeQuery {
  @ScopeProperty('The scope of the template: an app id, or omitted for the global templates')
  appId?: string;
}

export class ToggleEmailTemplateDto {
  @ScopeProperty('The scope of the template: an app id, or null/omitted for the global templates')
  appId?: string | null;

  @ApiProperty() @IsBoolean() isActive: boolean;
}

export class DuplicateEmailTemplateDto {
  @ScopeProperty('The scope of the copy: an app id, or null/omitted for global')
  appId?: string | null;

  @ApiPropertyOptional({ maxLength: NAME_MAX, description: 'Default: `<name> (copy)`' })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX)
  name?: string;
}

export class ListEmailTemplatesQuery extends PaginationQueryDto {
  @ScopeProperty('An app id; omitted: the global templates')
  appId?: string;

  @ApiPropertyOptional({ enum: TEMPLATE_LANGUAGES })
  @IsOptional()
  @IsIn(TEMPLATE_LANGUAGES)
  language?: TemplateLanguage;

  @BooleanQuery() isActive?: boolean;

  @ApiPropertyOptional({ maxLength: SEARCH_MAX, description: 'Case-insensitive text in name or subject' })
  @IsOptional()
  @IsString()
  @MaxLength(SEARCH_MAX)
  search?: string;
}

export class TemplateSenderView {
  @ApiPropertyOptional() name?: string;
  @ApiProperty({ format: 'email' }) email: string;
}

export class EmailTemplateView {
  @ApiProperty() _id: string;
  @ApiProperty({ type: String, nullable: true, description: 'null: a global template' }) appId: string | null;
  @ApiProperty() name: string;
  @ApiProperty({ enum: TEMPLATE_LANGUAGES }) language: TemplateLanguage;
  @ApiProperty() subject: string;
  @ApiProperty() htmlTemplate: string;
  @ApiProperty() textTemplate: string;
  @ApiProperty({ type: [String] }) variables: string[];
  @ApiProperty() isActive: boolean;
  @ApiProperty() version: number;
  @ApiPropertyOptional({ type: TemplateSenderView }) sender?: TemplateSenderView;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

export class TemplateCategoryView {
  @ApiProperty({ enum: TEMPLATE_LANGUAGES }) language: TemplateLanguage;
  @ApiProperty() count: number;
}

export function toEmailTemplateView(template: EmailTemplate): EmailTemplateView {
  return {
    _id: String(template._id),
    appId: template.appId ?? null,
    name: template.name,
    language: template.language,
    subject: template.subject,
    htmlTemplate: template.htmlTemplate,
    textTemplate: template.textTemplate,
    variables: template.variables ?? [],
    isActive: template.isActive,
    version: template.version,
    ...(template.sender
      ? {
          sender: {
            ...(template.sender.name !== undefined ? { name: template.sender.name } : {}),
            email: template.sender.email,
          },
        }
      : {}),
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}
