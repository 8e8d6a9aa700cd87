import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { Role, ROLES } from '../../common/auth/roles';

export const LANGUAGES = ['en', 'es'] as const;
export const THEMES = ['light', 'dark', 'auto'] as const;
export const BIO_MAX_LENGTH = 500;

@Schema({ _id: false })
export class UserProfile {
  @Prop() avatar?: string;
  @Prop({ maxlength: BIO_MAX_LENGTH }) bio?: string;
  @Prop() phone?: string;
  @Prop({ default: 'UTC' }) timezone: string;
  @Prop({ type: String, enum: LANGUAGES, default: 'en' }) language: (typeof LANGUAGES)[number];
}

@Schema({ _id: false })
export class NotificationSettings {
  @Prop({ default: true }) email: boolean;
  @Prop({ default: false }) push: boolean;
}

@Schema({ _id: false })
export class UserSettings {
  @Prop({ type: NotificationSettings, default: () => ({}) }) notifications: NotificationSettings;
  @Prop({ type: String, enum: THEMES, default: 'auto' }) theme: (typeof THEMES)[number];
  @Prop() defaultApp?: string;
}

/**
 * TOTP two-factor sign-in (docs/api/staff.md "Two-factor sign-in"). Never selected unless asked for, and
 * never in a view: the secrets are sealed (AES-256-GCM with SecretKeys.totpSecret), the codes hashed.
 */
@Schema({ _id: false })
export class TwoFactorState {
  /** The sealed secret of the enabled factor. */
  @Prop() secret?: string;
  /** The sealed secret of a set-up that `enable` has not confirmed yet. */
  @Prop() pendingSecret?: string;
  /** The last time step a code was accepted for: a code of that step or an earlier one is a replay. */
  @Prop() lastStep?: number;
  /** SHA-256 of each unused recovery code; a code is pulled when used. */
  @Prop({ type: [String], default: undefined }) recoveryCodes?: string[];
}

/** One signed-out token: refused until it would have expired anyway. */
@Schema({ _id: false })
export class RevokedToken {
  @Prop({ required: true }) jti: string;
  @Prop({ required: true }) exp: Date;
}

@Schema({ collection: 'users', timestamps: true })
export class User {
  _id: Types.ObjectId;

  // Unique e-mail: serves login and the duplicate check on create.
  @Prop({ required: true, unique: true, lowercase: true, trim: true }) email: string;

  /** bcrypt hash; never selected unless asked for explicitly. */
  @Prop({ required: true, select: false }) password: string;

  @Prop({ required: true, trim: true }) firstName: string;
  @Prop({ required: true, trim: true }) lastName: string;
  @Prop({ type: String, enum: ROLES, default: Role.User }) role: Role;
  @Prop({ default: true }) isActive: boolean;
  @Prop({ type: UserProfile, default: () => ({}) }) profile: UserProfile;
  @Prop({ type: UserSettings, default: () => ({}) }) settings: UserSettings;
  @Prop() lastLoginAt?: Date;
  @Prop({ default: 0 }) loginCount: number;

  /** Raised on deactivation, role or password change; tokens carrying an older value are refused. */
  @Prop({ default: 0, select: false }) tokenVersion: number;

  /** Whether sign-in asks for a TOTP code (shown in views; the secrets are in `twoFactor`). */
  @Prop({ default: false }) twoFactorEnabled: boolean;
  @Prop({ type: TwoFactorState, select: false }) twoFactor?: TwoFactorState;

  /** Tokens ended by `POST /auth/logout` (at most REVOKED_TOKENS_MAX; past that, every token is ended). */
  @Prop({ type: [RevokedToken], select: false, default: undefined }) revokedTokens?: RevokedToken[];

  createdAt: Date;
  updatedAt: Date;
}

export const UserSchema = SchemaFactory.createForClass(User);

// GET /users filters by role and isActive.
UserSchema.index({ role: 1, isActive: 1 });
