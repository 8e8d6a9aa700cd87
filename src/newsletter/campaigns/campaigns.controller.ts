import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { type AuthUser, CurrentUser } from '../../common/auth/current-user.decorator';
import { Access } from '../../common/auth/roles';
import { AcceptsBody, CONTENT_BODY_BYTES } from '../../common/http/body/body-policy';
import { done, ok, page } from '../../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../../common/swagger/envelope.decorators';
import { NothingToUpdatePipe } from '../../common/validation/nothing-to-update.pipe';
import { CampaignHoldsListener } from './campaign-holds.listener';
import { OUTSIDE_TESTS_PER_WINDOW } from './campaign-test-recipients';
import {
  ALREADY_SENT,
  CampaignsService,
  NOT_A_DRAFT,
  NOT_A_DRAFT_TEST,
  NOT_SCHEDULED,
  SCHEDULED,
} from './campaigns.service';
import {
  CampaignResumeView,
  CampaignSendView,
  CampaignTestView,
  CampaignView,
  CreateCampaignDto,
  ListCampaignsQuery,
  ScheduleCampaignDto,
  TestCampaignDto,
  toCampaignView,
  UpdateCampaignDto,
} from './dto/campaign.dto';
import { NOT_HELD } from './campaign-holds.listener';

@ApiTags('Newsletter')
@Controller('admin/:appId/newsletter/campaigns')
@Authenticated(Access.Write)
export class CampaignsController {
  constructor(
    private readonly campaigns: CampaignsService,
    private readonly holds: CampaignHoldsListener,
  ) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listCampaigns', summary: 'List the app’s campaigns, newest first' })
  @ApiPageEnvelope(CampaignView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async list(@Param('appId') appId: string, @Query() query: ListCampaignsQuery) {
    const { items, pagination } = await this.campaigns.list(appId, query);
    return page(items.map(toCampaignView), pagination);
  }

  @Post()
  @AcceptsBody({ maxBytes: CONTENT_BODY_BYTES })
  @ApiOperation({ operationId: 'createCampaign', summary: 'Create a draft campaign' })
  @ApiOkEnvelope(CampaignView, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async create(@Param('appId') appId: string, @Body() dto: CreateCampaignDto, @CurrentUser() user: AuthUser) {
    return ok(toCampaignView(await this.campaigns.create(appId, dto, user.id)));
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getCampaign', summary: 'Get one campaign with its statistics' })
  @ApiOkEnvelope(CampaignView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('appId') appId: string, @Param('id') id: string) {
    return ok(toCampaignView(await this.campaigns.get(appId, id)));
  }

  @Patch(':id')
  @AcceptsBody({ maxBytes: CONTENT_BODY_BYTES })
  @ApiOperation({ operationId: 'updateCampaign', summary: 'Edit a draft campaign (409 once sent)' })
  @ApiOkEnvelope(CampaignView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, NOT_A_DRAFT)
  async update(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body(NothingToUpdatePipe) dto: UpdateCampaignDto,
  ) {
    return ok(toCampaignView(await this.campaigns.update(appId, id, dto)));
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteCampaign', summary: 'Delete a draft campaign (409 once sent)' })
  @ApiDoneEnvelope('Campaign deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, NOT_A_DRAFT)
  async remove(@Param('appId') appId: string, @Param('id') id: string) {
    await this.campaigns.remove(appId, id);
    return done('Campaign deleted');
  }

  @Post(':id/send')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'sendCampaign',
    summary: 'Send a draft to its audience now (queues a batch plan; 409 if not a draft)',
  })
  @ApiOkEnvelope(CampaignSendView, { message: 'Campaign is being sent' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, ALREADY_SENT)
  async send(@Param('appId') appId: string, @Param('id') id: string) {
    return ok(await this.campaigns.send(appId, id), 'Campaign is being sent');
  }

  @Post(':id/schedule')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'scheduleCampaign',
    summary: 'Schedule a draft to be sent at `sendAt` (409 if not a draft)',
    description:
      'Status `scheduled`, `scheduledFor` = `sendAt` (in the future, at most a year ahead); it starts then, ' +
      'give or take the worker interval, on exactly one instance; it cannot be edited until unscheduled.',
  })
  @ApiOkEnvelope(CampaignView, { message: 'Campaign scheduled' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, SCHEDULED)
  async schedule(@Param('appId') appId: string, @Param('id') id: string, @Body() dto: ScheduleCampaignDto) {
    const scheduled = await this.campaigns.schedule(appId, id, new Date(dto.sendAt));
    return ok(toCampaignView(scheduled), 'Campaign scheduled');
  }

  @Post(':id/unschedule')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'unscheduleCampaign',
    summary: 'Take a scheduled campaign back to draft (409 if not scheduled, or already started)',
  })
  @ApiOkEnvelope(CampaignView, { message: 'Campaign unscheduled' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, NOT_SCHEDULED)
  async unschedule(@Param('appId') appId: string, @Param('id') id: string) {
    return ok(toCampaignView(await this.campaigns.unschedule(appId, id)), 'Campaign unscheduled');
  }

  @Post(':id/test')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'testCampaign',
    summary: 'Send one test copy of a draft to an address (409 once sent)',
    description:
      `To a user of this service, or to any other address at most ${OUTSIDE_TESTS_PER_WINDOW} times per ` +
      'hour per sending user (429 beyond). Rendered like the real send: every variable filled (`variables`, ' +
      'else the app’s first subscriber’s names), the same headers, and tracking links and pixel on the ' +
      'app’s link domain that work but are not counted.',
  })
  @ApiOkEnvelope(CampaignTestView, { message: 'Test e-mail queued for ada@example.com' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.TOO_MANY_REQUESTS)
  @ApiErrorMessage(HttpStatus.CONFLICT, NOT_A_DRAFT_TEST)
  async test(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body() dto: TestCampaignDto,
    @CurrentUser() user: AuthUser,
  ) {
    return ok(
      await this.campaigns.test(appId, id, dto.email, user.id, dto.variables),
      `Test e-mail queued for ${dto.email}`,
    );
  }

  /** Resuming a campaign the complaint guard held is an admin's decision (its complaints are high). */
  @Post(':id/resume')
  @HttpCode(HttpStatus.OK)
  @Authenticated(Access.Admin)
  @ApiOperation({
    operationId: 'resumeCampaign',
    summary: 'Resume a campaign held by the complaint guard: its held messages are queued again',
  })
  @ApiOkEnvelope(CampaignResumeView, { message: 'Campaign resumed' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, NOT_HELD)
  async resume(@Param('appId') appId: string, @Param('id') id: string) {
    const { released, campaign } = await this.holds.resume(appId, id);
    return ok({ released, campaign: toCampaignView(campaign) }, 'Campaign resumed');
  }
}
