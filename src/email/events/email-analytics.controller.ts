import { Controller, Get, HttpStatus, Param, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { Access } from '../../common/auth/roles';
import { validObjectIdOr404 } from '../../common/database/object-id';
import { ok, page } from '../../common/http/envelope';
import { PageQueryDto } from '../../common/pagination/pagination';
import {
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
  PaginationSchema,
} from '../../common/swagger/envelope.decorators';
import {
  CampaignAnalyticsView,
  ContactAnalyticsView,
  OverviewQuery,
  OverviewView,
  RecipientView,
} from './dto/analytics.dto';
import { ApiCampaignIdParam, CAMPAIGN_ID } from './dto/email-event.dto';
import { EmailAnalyticsService } from './email-analytics.service';
import { pathIdOr404 } from './email-events.controller';

/** E-mail analytics (spec "E-mail Analytics"), read from the counters; open to viewers like every GET. */
@ApiTags('E-mail analytics')
@Controller('admin/email-events/analytics')
@Authenticated(Access.Read)
export class EmailAnalyticsController {
  constructor(private readonly analytics: EmailAnalyticsService) {}

  @Get('campaigns/:campaignId')
  @ApiOperation({
    operationId: 'getCampaignAnalytics',
    summary: 'A campaign’s figures: unique opens and clicks, top links, daily timeline per type',
  })
  @ApiCampaignIdParam()
  @ApiOkEnvelope(CampaignAnalyticsView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async campaign(@Param('campaignId') campaignId: string) {
    return ok(await this.analytics.campaign(pathIdOr404(campaignId, CAMPAIGN_ID, 'Campaign not found')));
  }

  @Get('campaigns/:campaignId/recipients')
  @ApiOperation({
    operationId: 'listCampaignRecipientAnalytics',
    summary: 'The people with events in a campaign, with their event types and last event',
  })
  @ApiCampaignIdParam()
  @ApiPageEnvelope(RecipientView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async recipients(@Param('campaignId') campaignId: string, @Query() query: PageQueryDto) {
    const id = pathIdOr404(campaignId, CAMPAIGN_ID, 'Campaign not found');
    const { items, pagination } = await this.analytics.recipients(id, query.page, query.limit);
    return page(items, pagination);
  }

  @Get('contacts/:contactId')
  @ApiOperation({
    operationId: 'getContactAnalytics',
    summary: 'A person’s totals and a page of their latest events',
  })
  @ApiExtraModels(ContactAnalyticsView, PaginationSchema)
  @ApiResponse({
    status: HttpStatus.OK,
    description: 'The person’s figures; `pagination` pages `data.events`',
    schema: {
      type: 'object',
      required: ['success', 'data', 'pagination'],
      properties: {
        success: { type: 'boolean', example: true },
        data: { $ref: getSchemaPath(ContactAnalyticsView) },
        pagination: { $ref: getSchemaPath(PaginationSchema) },
      },
    },
  })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async contact(@Param('contactId') contactId: string, @Query() query: PageQueryDto) {
    const id = validObjectIdOr404(contactId, 'Contact not found');
    const { data, pagination } = await this.analytics.contact(id, query.page, query.limit);
    return { ...ok(data), pagination };
  }

  @Get('overview')
  @ApiOperation({
    operationId: 'getEmailAnalyticsOverview',
    summary: 'Totals, rates and a daily timeline over a range of days (every app, or one)',
  })
  @ApiOkEnvelope(OverviewView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async overview(@Query() query: OverviewQuery) {
    return ok(await this.analytics.overview(query));
  }
}
