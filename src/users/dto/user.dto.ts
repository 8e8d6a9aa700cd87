import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Role, ROLES } from '../../common/auth/roles';
import { LANGUAGES, THEMES, type User } from '../schemas/user.schema';

class UserProfileView {
  @ApiPropertyOptional() avatar?: string;
  @ApiPropertyOptional({ maxLength: 500 }) bio?: string;
  @ApiPropertyOptional() phone?: string;
  @ApiProperty({ default: 'UTC' }) timezone: string;
  @ApiProperty({ enum: LANGUAGES, default: 'en' }) language: string;
}

class NotificationSettingsView {
  @ApiProperty({ default: true }) email: boolean;
  @ApiProperty({ default: false }) push: boolean;
}

class UserSettingsView {
  @ApiProperty() notifications: NotificationSettingsView;
  @ApiProperty({ enum: THEMES, default: 'auto' }) theme: string;
  @ApiPropertyOptional() defaultApp?: string;
}

/** An admin user as every response shows it: no password hash, no token version. */
export class UserView {
  @ApiProperty() _id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty() firstName: string;
  @ApiProperty() lastName: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty() isActive: boolean;
  @ApiProperty() profile: UserProfileView;
  @ApiProperty() settings: UserSettingsView;
  @ApiPropertyOptional({ format: 'date-time' }) lastLoginAt?: Date;
  @ApiProperty() loginCount: number;
  @ApiProperty({ description: 'Whether sign-in asks for a TOTP code' }) twoFactorEnabled: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: Date;
  @ApiProperty({ format: 'date-time' }) updatedAt: Date;
}

/** The one place a stored user becomes a response. */
export function toUserView(user: User): UserView {
  return {
    _id: String(user._id),
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    role: user.role,
    isActive: user.isActive,
    profile: user.profile,
    settings: user.settings,
    lastLoginAt: user.lastLoginAt,
    loginCount: user.loginCount,
    twoFactorEnabled: user.twoFactorEnabled ?? false,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}
