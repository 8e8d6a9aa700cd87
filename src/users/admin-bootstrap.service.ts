import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Env } from '../config/env';
import { UsersService } from './users.service';

/** Creates the ADMIN_EMAIL / ADMIN_PASSWORD admin at start-up when no user has that e-mail. */
@Injectable()
export class AdminBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrapService.name);

  constructor(
    private readonly env: Env,
    private readonly users: UsersService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { ADMIN_EMAIL: email, ADMIN_PASSWORD: password } = this.env;
    if (!email || !password) return;
    const created = await this.users.ensureAdmin(email, password);
    this.logger.log(created ? `Created admin user ${email}` : `Admin user ${email} exists; left unchanged`);
  }
}
