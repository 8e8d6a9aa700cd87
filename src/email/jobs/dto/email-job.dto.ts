import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PaginationQueryDto } from '../../../common/pagination/pagination';
import { REDACTED, redactPayload } from '../job-redaction';
import {
  EMAIL_JOB_STATUSES,
  EMAIL_JOB_TYPES,
  EMAIL_STREAMS,
  type EmailJob,
  type EmailJobStatus,
  type EmailJobType,
  type EmailStream,
  streamOf,
} from '../schemas/email-job.schema';

const CAMPAIGN_ID = /^[\w.:-]{1,100}$/;

export class ListEmailJobsQuery extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: EMAIL_JOB_STATUSES })
  @IsOptional()
  @IsIn(EMAIL_JOB_STATUSES)
  status?: EmailJobStatus;

  @ApiPropertyOptional({ enum: EMAIL_JOB_TYPES })
  @IsOptional()
  @IsIn(EMAIL_JOB_TYPES)
  type?: EmailJobType;

  @ApiPropertyOptional({ enum: EMAIL_STREAMS })
  @IsOptional()
  @IsIn(EMAIL_STREAMS)
  stream?: EmailStream;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(CAMPAIGN_ID, { message: 'campaignId must be a campaign id' })
  campaignId?: string;
}

export class EmailJobStatsQuery {
  @ApiPropertyOptional({ description: 'Only the jobs of this campaign' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(CAMPAIGN_ID, { message: 'campaignId must be a campaign id' })
  campaignId?: string;
}

export class EmailJobView {
  @ApiProperty() _id: string;
  @ApiProperty({ enum: EMAIL_JOB_TYPES }) type: EmailJobType;
  @ApiProperty({
    enum: EMAIL_STREAMS,
    description: 'Its lane of the queue; a job queued before streams: broadcast when of a campaign',
  })
  stream: EmailStream;
  @ApiProperty({ enum: EMAIL_JOB_STATUSES }) status: EmailJobStatus;
  @ApiProperty({ description: 'Higher runs first' }) priority: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      `The message (or batch plan) as queued, redacted: sealed secrets (\`sealed\`), rendered bodies ` +
      `(\`html\`, \`text\`) and unsubscribe links (\`unsubscribeUrl\`, also among \`variables\`) read ` +
      `\`"${REDACTED}"\`. A sign-in link's token is never returned.`,
  })
  payload: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) result?: Record<string, unknown>;
  @ApiProperty() attempts: number;
  @ApiProperty() maxAttempts: number;
  @ApiPropertyOptional() lastError?: string;
  @ApiProperty({
    description:
      'Attempts whose outcome was unknown: handed to the transport, then their worker died. A job ' +
      'completed after one was sent again (through an idempotent API; over SMTP it ends dead instead)',
  })
  unknownOutcomes: number;
  @ApiProperty() idempotencyKey: string;
  @ApiProperty({ type: String, nullable: true }) appId: string | null;
  @ApiProperty({ type: String, nullable: true }) campaignId: string | null;
  @ApiPropertyOptional({ description: 'Provider message id of the delivered message' }) messageId?: string;
  @ApiProperty() scheduledAt: Date;
  @ApiPropertyOptional() startedAt?: Date;
  @ApiPropertyOptional() completedAt?: Date;
  @ApiProperty() createdAt: Date;
  @ApiProperty() updatedAt: Date;
}

export class EmailJobCounters {
  @ApiProperty() pending: number;
  @ApiProperty() processing: number;
  @ApiProperty() completed: number;
  @ApiProperty() failed: number;
  @ApiProperty() dead: number;
  @ApiProperty() total: number;
}

export class EmailJobProgress extends EmailJobCounters {
  @ApiProperty({ description: 'Finished jobs (completed or dead) in percent of all, rounded down' })
  percentage: number;
}

export class EmailJobStats extends EmailJobCounters {
  @ApiProperty({ type: EmailJobProgress }) progress: EmailJobProgress;
  @ApiProperty({
    description:
      'A status count stopped at 10,000 (each is counted up to there): that figure, `total` and ' +
      '`percentage` are lower bounds or estimates',
  })
  capped: boolean;
}

export function toEmailJobView(job: EmailJob): EmailJobView {
  return {
    _id: String(job._id),
    type: job.type,
    stream: streamOf(job),
    status: job.status,
    priority: job.priority,
    payload: redactPayload(job.payload),
    result: job.result,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    lastError: job.lastError,
    unknownOutcomes: job.unknownOutcomes ?? 0,
    idempotencyKey: job.idempotencyKey,
    appId: job.appId ?? null,
    campaignId: job.campaignId ?? null,
    messageId: job.messageId,
    scheduledAt: job.scheduledAt,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
}
