import { Controller, Get, HttpStatus, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { Access } from '../../common/auth/roles';
import { ok, page } from '../../common/http/envelope';
import { ApiErrors, ApiOkEnvelope, ApiPageEnvelope } from '../../common/swagger/envelope.decorators';
import {
  EmailJobStats,
  EmailJobStatsQuery,
  EmailJobView,
  ListEmailJobsQuery,
  toEmailJobView,
} from './dto/email-job.dto';
import { EmailJobsService } from './email-jobs.service';

/**
 * The queue's inspection routes are all reads: open to viewers, like every GET (docs/architecture.md
 * "Credentials and roles").
 */
@ApiTags('E-mail jobs')
@Controller('admin/email-jobs')
@Authenticated(Access.Read)
export class EmailJobsController {
  constructor(private readonly jobs: EmailJobsService) {}

  @Get()
  @ApiOperation({ operationId: 'listEmailJobs', summary: 'List e-mail jobs, newest first' })
  @ApiPageEnvelope(EmailJobView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListEmailJobsQuery) {
    const { items, pagination } = await this.jobs.list(query);
    return page(items.map(toEmailJobView), pagination);
  }

  @Get('stats')
  @ApiOperation({
    operationId: 'getEmailJobStats',
    summary: 'Jobs by status, with progress, optionally for one campaign',
  })
  @ApiOkEnvelope(EmailJobStats)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async stats(@Query() query: EmailJobStatsQuery) {
    return ok(await this.jobs.stats(query.campaignId));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getEmailJob', summary: 'Get one e-mail job' })
  @ApiOkEnvelope(EmailJobView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('id') id: string) {
    return ok(toEmailJobView(await this.jobs.get(id)));
  }
}
