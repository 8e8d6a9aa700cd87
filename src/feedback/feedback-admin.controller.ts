import { Body, Controller, Delete, Get, HttpStatus, Param, Patch, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { done, ok, page } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../common/swagger/envelope.decorators';
import {
  FeedbackPriorityDto,
  FeedbackStats,
  FeedbackStatusDto,
  FeedbackView,
  ListFeedbackQuery,
  toFeedbackView,
  UpdateFeedbackDto,
} from './dto/feedback.dto';
import { FeedbackService } from './feedback.service';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { ApiUnknownApp, KnownApp } from '../apps/known-app.pipe';

@ApiTags('Feedback')
@Controller('admin/:appId/feedback')
@Authenticated(Access.Write)
export class FeedbackAdminController {
  constructor(private readonly feedback: FeedbackService) {}

  @Get('stats')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'getFeedbackStats',
    summary: 'Counts of the app’s feedback by type and status',
  })
  @ApiOkEnvelope(FeedbackStats)
  @ApiUnknownApp()
  async stats(@Param('appId', KnownApp) appId: string) {
    return ok(await this.feedback.stats(appId));
  }

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listFeedback', summary: 'List the app’s feedback' })
  @ApiPageEnvelope(FeedbackView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async list(@Param('appId', KnownApp) appId: string, @Query() query: ListFeedbackQuery) {
    const { items, pagination } = await this.feedback.list(appId, query);
    return page(items.map(toFeedbackView), pagination);
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getFeedback', summary: 'Get one feedback' })
  @ApiOkEnvelope(FeedbackView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('appId') appId: string, @Param('id') id: string) {
    return ok(toFeedbackView(await this.feedback.get(appId, id)));
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'updateFeedback', summary: 'Edit type, subject or message' })
  @ApiOkEnvelope(FeedbackView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body(NothingToUpdatePipe) dto: UpdateFeedbackDto,
  ) {
    return ok(toFeedbackView(await this.feedback.update(appId, id, dto)));
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteFeedback', summary: 'Delete one feedback' })
  @ApiDoneEnvelope('Feedback deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('appId') appId: string, @Param('id') id: string) {
    await this.feedback.remove(appId, id);
    return done('Feedback deleted');
  }

  @Patch(':id/status')
  @ApiOperation({ operationId: 'setFeedbackStatus', summary: 'Change the status' })
  @ApiOkEnvelope(FeedbackView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async setStatus(@Param('appId') appId: string, @Param('id') id: string, @Body() dto: FeedbackStatusDto) {
    return ok(toFeedbackView(await this.feedback.setStatus(appId, id, dto.status)));
  }

  @Patch(':id/priority')
  @ApiOperation({ operationId: 'setFeedbackPriority', summary: 'Change the priority' })
  @ApiOkEnvelope(FeedbackView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async setPriority(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body() dto: FeedbackPriorityDto,
  ) {
    return ok(toFeedbackView(await this.feedback.setPriority(appId, id, dto.priority)));
  }
}
