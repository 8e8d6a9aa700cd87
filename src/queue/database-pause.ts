import type { Logger } from '@nestjs/common';
import type { DatabaseAvailability } from '../database/database-availability';

/**
 * A worker's pause while the database is away: it claims, scans and reaps nothing (each would fail, and
 * log), and says so once when the database goes and once when it returns. Jobs it holds meanwhile finish
 * as usual; their outcomes wait in the finish buffer, which retries until the database takes them.
 */
export class DatabasePause {
  private stopWatching: () => void = () => undefined;

  constructor(
    private readonly availability: DatabaseAvailability,
    private readonly logger: Logger,
  ) {}

  get paused(): boolean {
    return !this.availability.reachable;
  }

  watch(): void {
    this.stopWatching = this.availability.onChange(({ reachable, outageMs = 0 }) => {
      if (!reachable) this.logger.warn('The database is unreachable: claiming paused until it is back');
      else this.logger.log(`The database is back after ${(outageMs / 1000).toFixed(1)} s: claiming resumed`);
    });
  }

  unwatch(): void {
    this.stopWatching();
  }
}
