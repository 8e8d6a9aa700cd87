import { Controller, Get, HttpStatus, NotFoundException, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { Access } from '../../common/auth/roles';
import { ok, page } from '../../common/http/envelope';
import { ApiErrors, ApiOkEnvelope, ApiPageEnvelope } from '../../common/swagger/envelope.decorators';
import {
  ApiCampaignIdParam,
  ApiMessageIdParam,
  CAMPAIGN_ID,
  CampaignEventStats,
  EmailEventView,
  ListEmailEventsQuery,
  MESSAGE_ID,
  MessageEventView,
  toEmailEventView,
} from './dto/email-event.dto';
import { EmailEventsService } from './email-events.service';

/**
 * A path id that cannot name anything is answered like an unknown one (docs/architecture.md "Envelope and
 * errors").
 */
export function pathIdOr404(id: string, pattern: RegExp, notFound: string): string {
  if (!pattern.test(id)) throw new NotFoundException(notFound);
  return id;
}

/** Raw e-mail events (spec "E-mail Events"): reads, open to viewers like every GET. */
@ApiTags('E-mail events')
@Controller('admin/email-events')
@Authenticated(Access.Read)
export class EmailEventsController {
  constructor(private readonly events: EmailEventsService) {}

  @Get()
  @ApiOperation({ operationId: 'listEmailEvents', summary: 'List e-mail events, newest first' })
  @ApiPageEnvelope(EmailEventView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListEmailEventsQuery) {
    const { items, pagination } = await this.events.list(query);
    return page(items.map(toEmailEventView), pagination);
  }

  @Get('message/:messageId')
  @ApiOperation({ operationId: 'listMessageEmailEvents', summary: 'The events of one message, oldest first' })
  @ApiMessageIdParam()
  @ApiOkEnvelope(MessageEventView, { isArray: true })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async message(@Param('messageId') messageId: string) {
    const id = pathIdOr404(messageId, MESSAGE_ID, 'No events for this message');
    return ok(await this.events.ofMessage(id));
  }

  @Get('campaign/:campaignId/stats')
  @ApiOperation({
    operationId: 'getCampaignEmailStats',
    summary: 'Delivery, open and click figures of a campaign',
  })
  @ApiCampaignIdParam()
  @ApiOkEnvelope(CampaignEventStats)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async campaignStats(@Param('campaignId') campaignId: string) {
    const id = pathIdOr404(campaignId, CAMPAIGN_ID, 'Campaign not found');
    return ok(await this.events.campaignStats(id));
  }
}
