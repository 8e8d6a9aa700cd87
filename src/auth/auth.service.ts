import { Injectable, OnModuleInit, UnauthorizedException } from '@nestjs/common';
import * as bcrypt from 'bcrypt';
import type { AuthUser } from '../common/auth/current-user.decorator';
import { displayName, UsersService } from '../users/users.service';
import { TokenService } from './token.service';

const INVALID_CREDENTIALS = 'Invalid e-mail or password';

@Injectable()
export class AuthService implements OnModuleInit {
  /** Compared against when the e-mail is unknown, so both failures take the same time (same bcrypt cost). */
  private dummyHash = '';

  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokenService,
  ) {}

  async onModuleInit(): Promise<void> {
    this.dummyHash = await this.users.hashPassword('timing-equaliser');
  }

  async login(email: string, password: string): Promise<{ token: string; user: AuthUser }> {
    const user = await this.users.findByEmailWithPassword(email);
    const matches = await bcrypt.compare(password, user?.password ?? this.dummyHash);
    if (!user || !matches || !user.isActive) throw new UnauthorizedException(INVALID_CREDENTIALS);

    await this.users.recordLogin(user._id);
    const authUser: AuthUser = {
      id: String(user._id),
      email: user.email,
      name: displayName(user),
      role: user.role,
    };
    const token = await this.tokens.sign({ sub: authUser.id, role: user.role, tv: user.tokenVersion ?? 0 });
    return { token, user: authUser };
  }

  /** A fresh token for a caller whose token the guard has just accepted. */
  async refresh(caller: AuthUser): Promise<string> {
    const subject = await this.users.findTokenSubject(caller.id);
    if (!subject) throw new UnauthorizedException('Invalid or expired token');
    return this.tokens.sign({ sub: caller.id, role: subject.role, tv: subject.tokenVersion ?? 0 });
  }

  hashPassword(password: string): Promise<string> {
    return this.users.hashPassword(password);
  }
}
