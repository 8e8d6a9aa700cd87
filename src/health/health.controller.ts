import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/public.decorator';
import { HealthRecord } from './health.dto';
import { HealthService } from './health.service';

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @Public()
  @ApiOperation({ operationId: 'getHealth', summary: 'Liveness and database status' })
  @ApiResponse({ status: HttpStatus.OK, type: HealthRecord, description: 'Healthy' })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    type: HealthRecord,
    description: 'The database is unreachable (`status:"error"`, `database.connected:false`)',
  })
  async check(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthRecord> {
    const record = await this.health.check();
    if (record.status !== 'ok') reply.status(HttpStatus.SERVICE_UNAVAILABLE);
    return record;
  }
}
