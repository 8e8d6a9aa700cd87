import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PaginationQueryDto } from '../../common/pagination/pagination';
import { BooleanQuery } from '../../common/validation/boolean-query.decorator';
import { Omittable } from '../../common/validation/omittable.decorator';
import { RequiresField } from '../../common/validation/requires-field.decorator';
import {
  CONSENT_CATEGORIES,
  CONSENT_HISTORY_WINDOW,
  type ConsentCategory,
  type ConsentEvent,
  type Contact,
  LOCALES,
  type Locale,
  REASON_MAX,
  type Subscription,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
  TAG_MAX,
} from '../schemas/contact.schema';

export const SEARCH_MAX = 100;

export class ListContactsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({
    maxLength: SEARCH_MAX,
    description: 'Part of the e-mail, first or last name (any case)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(SEARCH_MAX)
  search?: string;

  @ApiPropertyOptional({
    enum: CONSENT_CATEGORIES,
    description: 'Only people who gave consent in this category (or refused it: see categoryStatus)',
  })
  @IsOptional()
  @IsIn(CONSENT_CATEGORIES)
  category?: ConsentCategory;

  @BooleanQuery('With `category`: `true` consent given (the default), `false` refused or withdrawn')
  @RequiresField('category')
  categoryStatus?: boolean;

  @ApiPropertyOptional({ maxLength: TAG_MAX, description: 'Only people with this tag (exact)' })
  @IsOptional()
  @IsString()
  @MaxLength(TAG_MAX)
  tag?: string;
}

export class ConsentChangeDto {
  @ApiProperty({ enum: CONSENT_CATEGORIES }) @IsIn(CONSENT_CATEGORIES) category: ConsentCategory;

  @ApiProperty({ description: 'true: consent given; false: refused or withdrawn' })
  @IsBoolean()
  status: boolean;

  @ApiPropertyOptional({
    maxLength: REASON_MAX,
    description: 'Why, for the consent history (kept after a GDPR delete: no personal data here)',
  })
  @Omittable()
  @IsString()
  @MaxLength(REASON_MAX)
  reason?: string;
}

export class OptOutDto {
  @ApiPropertyOptional({ maxLength: REASON_MAX, description: 'Why, for the consent history' })
  @Omittable()
  @IsString()
  @MaxLength(REASON_MAX)
  reason?: string;
}

export class ConsentView {
  @ApiProperty({ type: Boolean, nullable: true }) outreach: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) commercial: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) blog: boolean | null;
}

export class SubscriptionView {
  @ApiProperty() appId: string;
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES }) status: SubscriptionStatus;
  @ApiProperty() source: string;
  @ApiProperty({ type: String, nullable: true }) referralUrl: string | null;
  @ApiProperty({ format: 'date-time' }) subscribedAt: Date;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) unsubscribedAt: Date | null;
  @ApiProperty({ type: [String], description: 'Newsletter topics of the app the person dropped' })
  droppedTopics: string[];
}

/** One entry of the consent history, as recorded (anonymised after a GDPR delete). */
export class ConsentEventView {
  @ApiProperty({ enum: CONSENT_CATEGORIES }) category: ConsentCategory;
  @ApiProperty({ description: "The category's consent after this event" }) status: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The newsletter topic kept (`status` true) or dropped (false); null: the whole category',
  })
  topic: string | null;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
  @ApiProperty({ description: '`admin`, `joinlist`, `unsubscribe`, `contacts.opt-out`, …' }) source: string;
  @ApiProperty({ type: String, nullable: true }) appId: string | null;
  @ApiProperty({ description: "An admin user's e-mail, `self` for the person, `system` for the service" })
  actor: string;
  @ApiProperty({ type: String, nullable: true }) ip: string | null;
  @ApiProperty({ type: String, nullable: true }) referralUrl: string | null;
  @ApiProperty({ format: 'date-time' }) at: Date;
}

/** A person as lists show them (without the consent history). */
export class ContactView {
  @ApiProperty() _id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty({ type: String, nullable: true }) lastName: string | null;
  @ApiProperty({ type: String, enum: LOCALES, nullable: true }) locale: Locale | null;
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiProperty({ type: ConsentView }) consent: ConsentView;
  @ApiProperty({ type: [SubscriptionView] }) subscriptions: SubscriptionView[];
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

/** One person with the consent history, oldest first. */
export class ContactDetailView extends ContactView {
  @ApiProperty({
    type: [ConsentEventView],
    description: `The newest ${CONSENT_HISTORY_WINDOW} consent events, oldest first (the data export holds all of them)`,
  })
  consentHistory: ConsentEventView[];
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Set by a GDPR delete: the record is then anonymised and kept for its consent history',
  })
  deletedAt: Date | null;
}

export function toContactView(contact: Contact): ContactView {
  return {
    _id: String(contact._id),
    email: contact.email,
    firstName: contact.firstName ?? null,
    lastName: contact.lastName ?? null,
    locale: contact.locale ?? null,
    tags: contact.tags ?? [],
    consent: {
      outreach: contact.consent?.outreach ?? null,
      commercial: contact.consent?.commercial ?? null,
      blog: contact.consent?.blog ?? null,
    },
    subscriptions: (contact.subscriptions ?? []).map(toSubscriptionView),
    createdAt: contact.createdAt,
    updatedAt: contact.updatedAt,
  };
}

export function toContactDetailView(contact: Contact): ContactDetailView {
  return {
    ...toContactView(contact),
    consentHistory: (contact.consentHistory ?? []).map(toConsentEventView),
    deletedAt: contact.deletedAt ?? null,
  };
}

export function toSubscriptionView(subscription: Subscription): SubscriptionView {
  return {
    appId: subscription.appId,
    status: subscription.status,
    source: subscription.source,
    referralUrl: subscription.referralUrl ?? null,
    subscribedAt: subscription.subscribedAt,
    unsubscribedAt: subscription.unsubscribedAt ?? null,
    droppedTopics: subscription.droppedTopics ?? [],
  };
}

function toConsentEventView(event: ConsentEvent): ConsentEventView {
  return {
    category: event.category,
    status: event.status,
    topic: event.topic ?? null,
    reason: event.reason ?? null,
    source: event.source,
    appId: event.appId ?? null,
    actor: event.actor,
    ip: event.ip ?? null,
    referralUrl: event.referralUrl ?? null,
    at: event.at,
  };
}
