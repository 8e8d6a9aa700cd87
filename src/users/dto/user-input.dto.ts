import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsEnum,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { Role, ROLES } from '../../common/auth/roles';
import { BooleanQuery } from '../../common/validation/boolean-query.decorator';
import { Omittable } from '../../common/validation/omittable.decorator';
import { BIO_MAX_LENGTH, LANGUAGES, THEMES } from '../schemas/user.schema';
import { IsEmailAddress } from '../../common/validation/email-address';

export const PASSWORD_MIN_LENGTH = 6;
/** bcrypt reads at most 72 bytes; longer passwords would be silently truncated. */
export const PASSWORD_MAX_LENGTH = 72;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class UserProfileInput {
  @ApiPropertyOptional({ format: 'uri' })
  @Omittable()
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  avatar?: string;

  @ApiPropertyOptional({ maxLength: BIO_MAX_LENGTH })
  @Omittable()
  @IsString()
  @MaxLength(BIO_MAX_LENGTH)
  bio?: string;

  @ApiPropertyOptional()
  @Omittable()
  @IsString()
  @MaxLength(40)
  phone?: string;

  @ApiPropertyOptional({ default: 'UTC' })
  @Omittable()
  @IsString()
  @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({ enum: LANGUAGES, default: 'en' })
  @Omittable()
  @IsIn(LANGUAGES)
  language?: (typeof LANGUAGES)[number];
}

export class NotificationSettingsInput {
  @ApiPropertyOptional({ default: true }) @Omittable() @IsBoolean() email?: boolean;
  @ApiPropertyOptional({ default: false }) @Omittable() @IsBoolean() push?: boolean;
}

export class UserSettingsInput {
  @ApiPropertyOptional({ type: NotificationSettingsInput })
  @Omittable()
  @ValidateNested()
  @Type(() => NotificationSettingsInput)
  notifications?: NotificationSettingsInput;

  @ApiPropertyOptional({ enum: THEMES, default: 'auto' })
  @Omittable()
  @IsIn(THEMES)
  theme?: (typeof THEMES)[number];

  @ApiPropertyOptional({ description: 'An app id' })
  @Omittable()
  @IsString()
  @MaxLength(100)
  defaultApp?: string;
}

export class PasswordDto {
  @ApiProperty({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH })
  @IsString()
  @MinLength(PASSWORD_MIN_LENGTH)
  @MaxLength(PASSWORD_MAX_LENGTH)
  password: string;
}

export class CreateUserDto extends PasswordDto {
  @ApiProperty({ format: 'email' })
  @Transform(trim)
  @IsEmailAddress()
  email: string;

  @ApiProperty() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) firstName: string;
  @ApiProperty() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(100) lastName: string;

  @ApiPropertyOptional({ enum: ROLES, default: Role.User })
  @Omittable()
  @IsEnum(Role)
  role?: Role;

  @ApiPropertyOptional({ type: UserProfileInput })
  @Omittable()
  @ValidateNested()
  @Type(() => UserProfileInput)
  profile?: UserProfileInput;

  @ApiPropertyOptional({ type: UserSettingsInput })
  @Omittable()
  @ValidateNested()
  @Type(() => UserSettingsInput)
  settings?: UserSettingsInput;
}

/** Only these fields may change; anything else (password, email, _id, loginCount…) is a 400. */
export class UpdateUserDto {
  @ApiPropertyOptional()
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  firstName?: string;
  @ApiPropertyOptional()
  @Omittable()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  lastName?: string;
  @ApiPropertyOptional({ enum: ROLES }) @Omittable() @IsEnum(Role) role?: Role;
  @ApiPropertyOptional() @Omittable() @IsBoolean() isActive?: boolean;

  @ApiPropertyOptional({ type: UserProfileInput })
  @Omittable()
  @ValidateNested()
  @Type(() => UserProfileInput)
  profile?: UserProfileInput;

  @ApiPropertyOptional({ type: UserSettingsInput })
  @Omittable()
  @ValidateNested()
  @Type(() => UserSettingsInput)
  settings?: UserSettingsInput;
}

export class ListUsersQuery {
  @ApiPropertyOptional({ enum: ROLES }) @IsOptional() @IsEnum(Role) role?: Role;

  @BooleanQuery() isActive?: boolean;
}
