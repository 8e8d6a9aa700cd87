import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/env';
import { UsersService } from './users.service';

/**
 * Creates the ADMIN_EMAIL / ADMIN_PASSWORD admin at start-up when no user has that e-mail, and restores
 * that user as an active admin when no active admin is left.
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
    if (!email || !password) return;
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
