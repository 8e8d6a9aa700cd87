import { ApiProperty } from '@nestjs/swagger';

export class MemoryRecord {
  @ApiProperty({ example: '92.4 MB' }) rss: string;
  @ApiProperty({ example: '41.0 MB' }) heapUsed: string;
  @ApiProperty({ example: '60.2 MB' }) heapTotal: string;
}

export class DatabaseStatus {
  @ApiProperty() connected: boolean;
  @ApiProperty({ description: 'Number of registered models' }) modelsCount: number;
}

/** The spec's health record, returned as the whole body (not inside `data`). */
export class HealthRecord {
  @ApiProperty({ enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ description: 'Process uptime in seconds' }) uptime: number;
  @ApiProperty() memory: MemoryRecord;
  @ApiProperty() database: DatabaseStatus;
}
