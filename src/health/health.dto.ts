import { ApiProperty } from '@nestjs/swagger';

export class MemoryRecord {
  @ApiProperty({ example: '92.4 MB' }) rss: string;
  @ApiProperty({ example: '41.0 MB' }) heapUsed: string;
  @ApiProperty({ example: '60.2 MB' }) heapTotal: string;
}

export class DatabaseStatus {
  @ApiProperty({
    description:
      'A writable server is known to the driver, which checks every 500 ms: false within about a second of ' +
      'losing the database, true again within about a second of its return',
  })
  connected: boolean;
  @ApiProperty({ description: 'Number of registered models' }) modelsCount: number;
}

/** E-mail jobs per status. */
export class EmailQueueDepth {
  @ApiProperty() pending: number;
  @ApiProperty() processing: number;
  @ApiProperty() completed: number;
  @ApiProperty() failed: number;
  @ApiProperty() dead: number;
  @ApiProperty({
    description: 'A status count stopped at 10,000 (each is counted up to there): read it as "at least"',
  })
  capped: boolean;
}

export class EmailWorkerStatus {
  @ApiProperty({ description: 'Whether this process runs the e-mail worker (`EMAIL_WORKER_ENABLED`)' })
  enabled: boolean;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      "When this process's last worker run ended; null before the first run or with the worker off",
  })
  lastRun: string | null;
  @ApiProperty({
    type: EmailQueueDepth,
    nullable: true,
    description: 'Jobs in the queue by status (all processes); null when the database did not answer in time',
  })
  queue: EmailQueueDepth | null;
}

/** Chat notifications still to deliver. */
export class ChatBacklogRecord {
  @ApiProperty({ description: 'Never attempted yet' }) pending: number;
  @ApiProperty({ description: 'Failed at least once, to be retried' }) failed: number;
}

/**
 * The contract's health record, returned as the whole body (not inside `data`), with the service's own extra
 * fields after the contract's five.
 */
export class HealthRecord {
  @ApiProperty({ enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ description: 'Process uptime in seconds' }) uptime: number;
  @ApiProperty() memory: MemoryRecord;
  @ApiProperty() database: DatabaseStatus;
  @ApiProperty({ example: '1.0.0', description: 'The running version (package.json)' }) version: string;
  @ApiProperty() emailWorker: EmailWorkerStatus;
  @ApiProperty({
    type: ChatBacklogRecord,
    nullable: true,
    description: 'Chat notifications waiting for delivery; null when the database did not answer in time',
  })
  chatBacklog: ChatBacklogRecord | null;
  @ApiProperty({
    format: 'date-time',
    description:
      'When the database figures (the queue, the chat backlog) were last refreshed: in the background every ' +
      "10 s, never by a request. `database.connected` is not among them: it follows the driver's checks.",
  })
  checkedAt: string;
}

/** `GET /health/live`: the process answers; nothing else is checked. */
export class LivenessRecord {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ description: 'Process uptime in seconds' }) uptime: number;
}
