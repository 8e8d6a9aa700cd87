import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/env';
import { UsersService } from './users.service';

/** The one line of a start that nobody can sign in to, saying how to create the first admin. */
export function noAdminLine(email: string | undefined): string {
  const missing = email
    ? 'ADMIN_EMAIL is set without ADMIN_PASSWORD'
    : 'ADMIN_EMAIL and ADMIN_PASSWORD are unset';
  return (
    `No admin can sign in (${missing}): to create the first admin, set ADMIN_EMAIL and ADMIN_PASSWORD ` +
    'and start again (README.md, "First login")'
  );
}

/**
 * Creates the ADMIN_EMAIL / ADMIN_PASSWORD admin at start-up when no user has that e-mail, and restores
 * that user as an active admin when no active admin is left. Without both settings and without an active
 * admin, says in one line how to create one: otherwise the service would run with no way in, silently.
 */
@Injectable()
export class AdminBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrapService.name);

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly users: UsersService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const email = this.config.get('ADMIN_EMAIL', { infer: true });
    const password = this.config.get('ADMIN_PASSWORD', { infer: true });
    if (!email || !password) {
      if (!(await this.users.hasActiveAdmin())) this.logger.warn(noAdminLine(email));
      return;
    }
    if (await this.users.ensureAdmin(email, password)) {
      this.logger.log('Created the admin user of ADMIN_EMAIL');
    } else if (await this.users.restoreAdminIfNone(email)) {
      // Nobody could administer the service (e.g. the last admin was removed directly in the database).
      this.logger.warn('No active admin was left: reactivated ADMIN_EMAIL as admin (password unchanged)');
    } else {
      this.logger.log('The admin user of ADMIN_EMAIL exists; left unchanged');
    }
  }
}
