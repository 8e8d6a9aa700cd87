import { Injectable } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { HealthRecord } from './health.dto';

const PING_TIMEOUT_MS = 2_000;

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

@Injectable()
export class HealthService {
  constructor(@InjectConnection() private readonly connection: Connection) {}

  async check(): Promise<HealthRecord> {
    const connected = await this.ping();
    const memory = process.memoryUsage();
    return {
      status: connected ? 'ok' : 'error',
      timestamp: new Date().toISOString(),
      uptime: process.uptime(),
      memory: {
        rss: megabytes(memory.rss),
        heapUsed: megabytes(memory.heapUsed),
        heapTotal: megabytes(memory.heapTotal),
      },
      database: { connected, modelsCount: this.connection.modelNames().length },
    };
  }

  /** A real round trip, bounded in time: a dead server must not hold the probe for the driver's 5 s. */
  private async ping(): Promise<boolean> {
    const db = this.connection.db;
    if (!db) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const ping = db
      .command({ ping: 1 })
      .then(() => true)
      .catch(() => false);
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
