import { Controller, Get, HttpStatus, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { page } from '../common/http/envelope';
import { ApiErrors, ApiPageEnvelope } from '../common/swagger/envelope.decorators';
import { AuditLogService } from './audit-log.service';
import { AuditLogQuery, AuditRecordView, toAuditRecordView } from './dto/audit-log.dto';

/** Read-only: no route changes or deletes a record (docs/api/staff.md "Audit log"). */
@ApiTags('Audit log')
@Controller('admin/audit-log')
@Authenticated(Access.Admin)
export class AuditLogController {
  constructor(private readonly audit: AuditLogService) {}

  @Get()
  @ApiOperation({
    operationId: 'listAuditLog',
    summary: 'Staff actions, newest first (filters: actor, action, appId, targetId, from/to; admins only)',
  })
  @ApiPageEnvelope(AuditRecordView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: AuditLogQuery) {
    const { items, pagination } = await this.audit.list(query);
    return page(items.map(toAuditRecordView), pagination);
  }
}
