import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/public.decorator';
import { ok } from '../common/http/envelope';
import { ApiOkEnvelope } from '../common/swagger/envelope.decorators';
import { HealthRecord, LivenessRecord } from './health.dto';
import { HealthService } from './health.service';

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @Public()
  @ApiOperation({
    operationId: 'getHealth',
    summary: 'Readiness: database status, e-mail queue and chat backlog',
    description:
      "The spec's health record (not enveloped) with `version`, `emailWorker` and `chatBacklog` added. " +
      'A load balancer should send traffic only while this answers 200; for "is the process alive" use ' +
      '`GET /health/live`, which never touches the database.',
  })
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

  @Get('live')
  @Public()
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'Liveness: the process answers (never touches the database)',
    description:
      'Answers 200 while the process can serve requests, whatever the database does: restart the process ' +
      'when this fails, not when `GET /health` reports the database down.',
  })
  @ApiOkEnvelope(LivenessRecord)
  live() {
    return ok(this.health.live());
  }
}
