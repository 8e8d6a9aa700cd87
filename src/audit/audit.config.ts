import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { type EnvSection, toInt } from '../config/env-rules';

/** The audit trail of staff actions (docs/operations/audit-log.md). */
export class AuditEnv {
  /** How long audit records are kept; the daily sweep deletes the oldest ones, keeping the chain whole. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(36_500)
  AUDIT_RETENTION_DAYS = 365;
}

export const auditEnv: EnvSection<AuditEnv> = { schema: AuditEnv };
