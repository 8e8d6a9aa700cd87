import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, IsUrl, MaxLength } from 'class-validator';
import { SubscriptionView, toSubscriptionView } from '../../contacts/dto/contact.dto';
import {
  type Contact,
  LOCALES,
  type Locale,
  NAME_MAX,
  REFERRAL_URL_MAX,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
} from '../../contacts/schemas/contact.schema';
import { PaginationQueryDto } from '../../common/pagination/pagination';
import { EMAIL_ADDRESS_MAX, IsEmailAddress } from '../../common/validation/email-address';
import { Omittable } from '../../common/validation/omittable.decorator';

export const SEARCH_MAX = 100;
/** Entries of one import request (spec); larger files are sent in several requests. */
export const IMPORT_MAX = 10_000;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** The person's own signup through the app's backend (`POST /{appId}/newsletter/subscribe`). */
export class SubscribeDto {
  @ApiProperty({ format: 'email', maxLength: EMAIL_ADDRESS_MAX })
  @Transform(trim)
  @IsEmailAddress()
  email: string;

  @ApiPropertyOptional({ maxLength: NAME_MAX })
  @Omittable()
  @Transform(trim)
  @IsString()
  @MaxLength(NAME_MAX)
  firstName?: string;

  @ApiPropertyOptional({ enum: LOCALES }) @Omittable() @IsIn(LOCALES) locale?: Locale;

  @ApiPropertyOptional({ format: 'uri', maxLength: REFERRAL_URL_MAX, description: 'The page of the signup' })
  @Omittable()
  @IsString()
  @MaxLength(REFERRAL_URL_MAX)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  referralUrl?: string;
}

export class SubscribeResult {
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
}

/** An admin adds one person to the app's newsletter. */
export class CreateSubscriberDto {
  @ApiProperty({ format: 'email', maxLength: EMAIL_ADDRESS_MAX })
  @Transform(trim)
  @IsEmailAddress()
  email: string;

  @ApiPropertyOptional({
    maxLength: NAME_MAX,
    description: 'Kept only when the person has no first name yet',
  })
  @Omittable()
  @Transform(trim)
  @IsString()
  @MaxLength(NAME_MAX)
  firstName?: string;

  @ApiPropertyOptional({ enum: LOCALES, description: 'Kept only when the person has no locale yet' })
  @Omittable()
  @IsIn(LOCALES)
  locale?: Locale;
}

/**
 * One entry of an import, documented here and checked by `subscriber-import-entry.ts` (not class-validator).
 */
export class ImportSubscriberEntry {
  @ApiProperty({ format: 'email', maxLength: EMAIL_ADDRESS_MAX }) email: string;
  @ApiPropertyOptional({ maxLength: NAME_MAX }) firstName?: string;
  @ApiPropertyOptional({ enum: LOCALES }) locale?: Locale;
}

export class ImportSubscribersDto {
  @ApiProperty({
    type: [ImportSubscriberEntry],
    maxItems: IMPORT_MAX,
    example: [{ email: 'ada@example.com', firstName: 'Ada', locale: 'en' }, { email: 'bob@example.com' }],
    description:
      'Entries that are not a valid `{email, firstName?, locale?}` are skipped (reason `invalid`), not refused',
  })
  @IsArray()
  @ArrayMaxSize(IMPORT_MAX)
  subscribers: unknown[];
}

export const SKIP_REASONS = ['invalid', 'duplicate', 'already_subscribed'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export class SkippedEntry {
  @ApiProperty({ description: 'Position of the entry in `subscribers` (from 0)' }) index: number;
  @ApiProperty({ type: String, nullable: true, description: 'The address as sent, when it was a string' })
  email: string | null;
  @ApiProperty({
    enum: SKIP_REASONS,
    description:
      '`invalid`: not a valid entry (see `error`); `duplicate`: the address came earlier in this file; ' +
      '`already_subscribed`: the person already has a subscription to the app, whatever its status (an ' +
      'unsubscribed person stays unsubscribed)',
  })
  reason: SkipReason;
  @ApiPropertyOptional({ description: 'What is wrong with an `invalid` entry' }) error?: string;
}

export class ImportResult {
  @ApiProperty({ description: 'Subscriptions added (new people, and existing people without one)' })
  imported: number;
  @ApiProperty() skipped: number;
  @ApiProperty({ type: [SkippedEntry], description: 'The first skipped entries, in file order' })
  skippedDetails: SkippedEntry[];
  @ApiProperty({ description: 'More entries were skipped than `skippedDetails` lists' })
  skippedDetailsTruncated: boolean;
}

export class ListSubscribersQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES, description: "Status of the app's subscription" })
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES)
  status?: SubscriptionStatus;

  @ApiPropertyOptional({
    maxLength: SEARCH_MAX,
    description: 'Part of the e-mail, first or last name (any case)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(SEARCH_MAX)
  search?: string;
}

/**
 * A person as the newsletter of one app sees them: `_id` is the contact's, `subscriptions` holds that app's.
 */
export class SubscriberView {
  @ApiProperty({ description: "The person's contact id" }) _id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty({ type: String, nullable: true }) lastName: string | null;
  @ApiProperty({ type: String, enum: LOCALES, nullable: true }) locale: Locale | null;
  @ApiProperty({
    type: [SubscriptionView],
    description: "The subscription to this app (other apps' are not shown)",
  })
  subscriptions: SubscriptionView[];
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
}

export class SubscriberStats {
  @ApiProperty({ description: 'People with a subscription to the app, whatever its status' }) total: number;
  @ApiProperty() active: number;
  @ApiProperty() unsubscribed: number;
  @ApiProperty() bounced: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'Subscriptions by source (`api`, `joinlist`, `admin`, `import`, …)',
    example: { joinlist: 120, import: 3000 },
  })
  bySource: Record<string, number>;
}

export function toSubscriberView(contact: Contact, appId: string): SubscriberView {
  return {
    _id: String(contact._id),
    email: contact.email,
    firstName: contact.firstName ?? null,
    lastName: contact.lastName ?? null,
    locale: contact.locale ?? null,
    subscriptions: (contact.subscriptions ?? [])
      .filter((subscription) => subscription.appId === appId)
      .map(toSubscriptionView),
    createdAt: contact.createdAt,
  };
}
