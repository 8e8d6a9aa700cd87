import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateBy,
  ValidateNested,
  ValidationOptions,
} from 'class-validator';
import { AllowedOriginsProperty } from '../../common/validation/allowed-origins.decorator';
import { BooleanQuery } from '../../common/validation/boolean-query.decorator';
import { IsEmailAddress } from '../../common/validation/email-address';
import { Omittable } from '../../common/validation/omittable.decorator';
import { isReservedAppId, RESERVED_APP_IDS } from '../reserved-app-ids';
import { APP_ID_PATTERN } from '../schemas/app.schema';

export const APP_ID_MAX_LENGTH = 64;
const CHANNEL_NAME = /^[a-z][a-z0-9_-]{0,49}$/;
const MAX_CHANNELS = 50;
const CHANNEL_LABEL_MAX = 2048;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Feature flags and settings: names of letters, digits, `_` and `-`, starting with a letter. */
const FEATURE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const MAX_FEATURES = 50;
const FEATURE_TEXT_MAX = 500;

const isFeatureValue = (value: unknown) =>
  typeof value === 'boolean' ||
  (typeof value === 'number' && Number.isFinite(value)) ||
  (typeof value === 'string' && value.length <= FEATURE_TEXT_MAX);

/**
 * A flat map of scalars (boolean, finite number, string of at most 500 characters), at most 50 entries.
 * Flat on purpose: every `GET /admin/apps` serves it, and a nested value (a thousand levels, say) is what
 * made that costly; MongoDB also refuses names with `$` or `.`, which the name pattern excludes.
 */
function IsFeatureMap(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isFeatureMap',
      validator: {
        validate: (value: unknown) =>
          isPlainObject(value) &&
          Object.keys(value).length <= MAX_FEATURES &&
          Object.entries(value).every(([name, inner]) => FEATURE_NAME.test(name) && isFeatureValue(inner)),
        defaultMessage: () =>
          `$property must be an object of at most ${MAX_FEATURES} names (a letter, then letters, digits, _ or -) ` +
          `mapped to booleans, numbers or strings of at most ${FEATURE_TEXT_MAX} characters`,
      },
    },
    options,
  );
}

/** `{channelName: label}`: lower-case channel names, the label chat notifications of that channel show. */
function IsChannelMap(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isChannelMap',
      validator: {
        validate: (value: unknown) =>
          isPlainObject(value) &&
          Object.keys(value).length <= MAX_CHANNELS &&
          Object.entries(value).every(
            ([key, inner]) =>
              CHANNEL_NAME.test(key) && typeof inner === 'string' && inner.length <= CHANNEL_LABEL_MAX,
          ),
        defaultMessage: () =>
          `$property must map at most ${MAX_CHANNELS} channel names (a-z, 0-9, _ and -) to strings`,
      },
    },
    options,
  );
}

/** Not one of the words that fixed routes use where app routes put the app id (see reserved-app-ids.ts). */
function IsNotReservedAppId(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isNotReservedAppId',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !isReservedAppId(value),
        defaultMessage: () =>
          `$property must not be a route name of the service (${RESERVED_APP_IDS.join(', ')}): ` +
          'an app with that id would shadow those routes',
      },
    },
    options,
  );
}

/**
 * Who the app's mail is from. `email` must be on a verified sender domain of the app or on MAIL_FROM's
 * domain (checked by the service, 400 naming `sender.email`).
 */
export class AppSenderDto {
  @ApiPropertyOptional({ maxLength: 100, example: 'Lumen Club' })
  @Omittable()
  @Transform(trim)
  @IsString()
  @MaxLength(100)
  @Matches(/^[^\r\n"\\]*$/, { message: 'sender.name must be one line without quotes or backslashes' })
  name?: string;

  @ApiProperty({ format: 'email', example: 'club@lumen.example' }) @IsEmailAddress() email: string;

  @ApiPropertyOptional({ format: 'email', example: 'help@lumen.example' })
  @Omittable()
  @IsEmailAddress()
  replyTo?: string;
}

/** The fields of an app record that an admin sets (everything but the fixed `id` and the generated key). */
class AppFieldsDto {
  @ApiProperty({ minLength: 1, maxLength: 100 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ maxLength: 1000 })
  @Omittable()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: {
      oneOf: [{ type: 'boolean' }, { type: 'number' }, { type: 'string', maxLength: FEATURE_TEXT_MAX }],
    },
    maxProperties: MAX_FEATURES,
    // OpenAPI 3.0 has no `propertyNames`: the rule for names is in the description.
    description:
      'Flat map of flags and settings (no nesting); GET /apps reads canEditTemplates, canEditUsers and ' +
      'canViewMetrics from it; `doubleOptIn: true` makes every new newsletter signup (joinlist, API ' +
      'subscribe) confirm by e-mail first. Names: a letter, then at most 63 letters, digits, _ or - ' +
      `(${FEATURE_NAME.source}); values: ` +
      `booleans, finite numbers, strings of at most ${FEATURE_TEXT_MAX} characters`,
    example: { canEditTemplates: true, canEditUsers: false, canViewMetrics: true },
  })
  @IsOptional()
  @IsFeatureMap()
  features?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: CHANNEL_LABEL_MAX },
    maxProperties: MAX_CHANNELS,
    description:
      'Chat channel name → the label its notifications show (e.g. `#support`); destinations are set with ' +
      'chat routing rules (replaces the whole map on update). Names: a lower-case letter, then at most 49 ' +
      `of a-z, 0-9, _ or - (${CHANNEL_NAME.source})`,
    example: { tickets: '#support', feedback: '#product' },
  })
  @IsOptional()
  @IsChannelMap()
  chatChannels?: Record<string, string>;

  @AllowedOriginsProperty('Origins allowed to use the publishable key (replaces the whole list on update)')
  allowedOrigins?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  active?: boolean;

  @ApiPropertyOptional({
    type: AppSenderDto,
    description: 'From, name and Reply-To of the mail of the app (null on update: back to MAIL_FROM)',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => AppSenderDto)
  sender?: AppSenderDto;
}

export class CreateAppDto extends AppFieldsDto {
  @ApiProperty({
    pattern: APP_ID_PATTERN.source,
    maxLength: APP_ID_MAX_LENGTH,
    example: 'my-shop',
    description: `Not a route name of the service: ${RESERVED_APP_IDS.join(', ')}`,
  })
  @IsString()
  @Matches(APP_ID_PATTERN)
  @MaxLength(APP_ID_MAX_LENGTH)
  @IsNotReservedAppId()
  id: string;
}

/** Any of the fields; `id` is fixed at creation, so sending it is a 400 (not whitelisted). */
export class UpdateAppDto extends PartialType(AppFieldsDto) {}

export class ListAppsQuery {
  @BooleanQuery('true: only active apps') activeOnly?: boolean;
}
