import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AuditInterceptor } from './audit.interceptor';
import { AuditLogController } from './audit-log.controller';
import { AuditLogService } from './audit-log.service';
import { AuditRetention } from './audit-retention';
import { AuditTrail } from './audit-trail.service';
import { AuditIntent, AuditIntentSchema } from './schemas/audit-intent.schema';
import { AuditRecord, AuditRecordSchema } from './schemas/audit-record.schema';

/**
 * The audit trail of staff actions: the interceptor that writes it (put on the audited routes by
 * attachAuditTrail), the log route, retention and checks.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AuditRecord.name, schema: AuditRecordSchema },
      { name: AuditIntent.name, schema: AuditIntentSchema },
    ]),
  ],
  controllers: [AuditLogController],
  providers: [AuditTrail, AuditLogService, AuditRetention, AuditInterceptor],
  exports: [AuditLogService],
})
export class AuditModule {}
