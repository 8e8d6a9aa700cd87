import { Injectable, OnModuleInit, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import * as bcrypt from 'bcrypt';
import type { AuthUser } from '../common/auth/current-user.decorator';
import type { Role } from '../common/auth/roles';
import { StaffCredentialsService } from '../users/staff-credentials.service';
import { displayName, UsersService } from '../users/users.service';
import { TokenService } from './token.service';
import type { AppConfig } from '../config/env';
import { requiredRoles } from './two-factor/required-roles';
import { TwoFactorService } from './two-factor/two-factor.service';

const INVALID_CREDENTIALS = 'Invalid e-mail or password';

export interface LoginAttempt {
  email: string;
  password: string;
  code?: string;
}

/** Told who a sign-in is for once the password matched (the audit record's actor). */
export type OnActor = (actor: { id: string; email: string; role: Role }) => void;

@Injectable()
export class AuthService implements OnModuleInit {
  /** Compared against when the e-mail is unknown, so both failures take the same time (same bcrypt cost). */
  private dummyHash = '';
  private readonly twoFactorRoles: ReadonlySet<Role>;

  constructor(
    private readonly users: UsersService,
    private readonly credentials: StaffCredentialsService,
    private readonly tokens: TokenService,
    private readonly twoFactor: TwoFactorService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.twoFactorRoles = requiredRoles(config.get('TWO_FACTOR_REQUIRED_ROLES', { infer: true }));
  }

  async onModuleInit(): Promise<void> {
    this.dummyHash = await this.users.hashPassword('timing-equaliser');
  }

  /**
   * Password first, then, for a user with two-factor sign-in, the code (401 `twoFactorRequired` without
   * it or with a wrong one). The actor is named only after the password matched, so a guessed e-mail
   * alone puts nobody's name in the audit log.
   */
  async login(attempt: LoginAttempt, onActor: OnActor): Promise<{ token: string; user: AuthUser }> {
    const user = await this.users.findByEmailWithPassword(attempt.email);
    const matches = await bcrypt.compare(attempt.password, user?.password ?? this.dummyHash);
    if (!user || !matches || !user.isActive) throw new UnauthorizedException(INVALID_CREDENTIALS);
    const id = String(user._id);
    onActor({ id, email: user.email, role: user.role });
    if (user.twoFactorEnabled) await this.twoFactor.checkLoginCode(id, attempt.code);

    await this.users.recordLogin(user._id);
    const authUser: AuthUser = { id, email: user.email, name: displayName(user), role: user.role };
    if (this.twoFactorRoles.has(user.role) && !user.twoFactorEnabled) authUser.twoFactorSetupRequired = true;
    const token = await this.tokens.sign({ sub: authUser.id, role: user.role, tv: user.tokenVersion ?? 0 });
    return { token, user: authUser };
  }

  /** A fresh token for a caller whose token the guard has just accepted. */
  async refresh(caller: AuthUser): Promise<string> {
    const subject = await this.users.findTokenSubject(caller.id);
    if (!subject) throw new UnauthorizedException('Invalid or expired token');
    return this.tokens.sign({ sub: caller.id, role: subject.role, tv: subject.tokenVersion ?? 0 });
  }

  /** Ends the token the caller signed in with (the guard verified it); other sessions go on. */
  async logout(caller: AuthUser, token: string): Promise<void> {
    const { jti, exp } = this.tokens.claimsOf(token);
    if (jti && exp) await this.credentials.endSession(caller.id, jti, new Date(exp * 1000));
    else await this.credentials.endAllSessions(caller.id);
  }

  hashPassword(password: string): Promise<string> {
    return this.users.hashPassword(password);
  }
}
