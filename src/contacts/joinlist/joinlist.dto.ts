import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, IsUrl, Matches, MaxLength, MinLength } from 'class-validator';
import { EMAIL_ADDRESS_MAX, IsEmailAddress } from '../../common/validation/email-address';
import { Omittable } from '../../common/validation/omittable.decorator';
import { IsPlainName } from '../../common/validation/plain-name';
import { LOCALES, type Locale, NAME_MAX, REFERRAL_URL_MAX, SOURCE_MAX } from '../schemas/contact.schema';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/**
 * The longest honeypot value read; a bot's longer fill is still a filled honeypot, not a 400 that tells it.
 */
const HONEYPOT_MAX = 2_000;

export class JoinlistDto {
  @ApiPropertyOptional({ minLength: 1, description: "When given, must be the publishable key's app" })
  @Omittable()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  appId?: string;

  @ApiProperty({ format: 'email', maxLength: EMAIL_ADDRESS_MAX })
  @Transform(trim)
  @IsEmailAddress()
  email: string;

  @ApiPropertyOptional({
    maxLength: NAME_MAX,
    description: 'A plain name: no link, domain (a dot between letters), `@`, slash or line break',
  })
  @Omittable()
  @Transform(trim)
  @IsString()
  @MaxLength(NAME_MAX)
  @IsPlainName()
  firstName?: string;

  @ApiPropertyOptional({ enum: LOCALES }) @Omittable() @IsIn(LOCALES) locale?: Locale;

  @ApiPropertyOptional({
    maxLength: SOURCE_MAX,
    pattern: '^[A-Za-z0-9_.:-]+$',
    description: 'Where the signup came from (default `joinlist`)',
  })
  @Omittable()
  @IsString()
  @MaxLength(SOURCE_MAX)
  @Matches(/^[A-Za-z0-9_.:-]+$/, { message: 'source may hold letters, digits and _ . : - only' })
  source?: string;

  @ApiPropertyOptional({ format: 'uri', maxLength: REFERRAL_URL_MAX })
  @Omittable()
  @IsString()
  @MaxLength(REFERRAL_URL_MAX)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  referralUrl?: string;

  @ApiPropertyOptional({ description: 'Honeypot: leave empty (hidden from people, filled by bots)' })
  @IsOptional()
  @IsString()
  @MaxLength(HONEYPOT_MAX)
  website?: string;
}

export class JoinlistResult {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({
    description:
      'Always false: a public answer does not tell whether the address was subscribed already, waits ' +
      'for its confirmation or had unsubscribed (the person is told by e-mail when it matters)',
  })
  alreadySubscribed: boolean;
  @ApiProperty({
    format: 'uri',
    description:
      'Sealed link to the unsubscribe page that undoes only what this request did: it ends the ' +
      'subscription this request started, and nothing when the request started none (already ' +
      'subscribed, or confirmation pending). Every answer has a link of the same length that reveals ' +
      'nothing about the address',
  })
  unsubscribeUrl: string;
}
