import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationShutdown,
} from '@nestjs/common';

/**
 * The lines that frame a shutdown: what began it, and that it finished (in-flight work done, connections
 * closed).
 */
@Injectable()
export class LifecycleLog implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Lifecycle');
  private startedAt = 0;

  beforeApplicationShutdown(signal?: string): void {
    this.startedAt = Date.now();
    this.logger.log(
      `Shutting down${signal ? ` on ${signal}` : ''}: finishing requests and messages in flight`,
    );
  }

  onApplicationShutdown(): void {
    this.logger.log(`Stopped after ${Date.now() - this.startedAt} ms`);
  }
}
