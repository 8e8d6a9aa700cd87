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
  ListWantsQuery,
  toWantAdminView,
  UpdateWantDto,
  WantAdminView,
  WantPriorityDto,
  WantStats,
  WantStatusDto,
} from './dto/want.dto';
import { WantsService } from './wants.service';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { ApiUnknownApp, KnownApp } from '../apps/known-app.pipe';

@ApiTags('Wants')
@Controller('admin/:appId/wants')
@Authenticated(Access.Write)
export class WantsAdminController {
  constructor(private readonly wants: WantsService) {}

  @Get('stats')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'getWantStatsAdmin',
    summary: 'Counts of the app’s wants by status, category and priority',
  })
  @ApiOkEnvelope(WantStats)
  @ApiUnknownApp()
  async stats(@Param('appId', KnownApp) appId: string) {
    return ok(await this.wants.stats(appId));
  }

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listWantsAdmin', summary: 'List the app’s wants (admin view)' })
  @ApiPageEnvelope(WantAdminView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async list(@Param('appId', KnownApp) appId: string, @Query() query: ListWantsQuery) {
    const { items, pagination } = await this.wants.list(appId, query);
    return page(items.map(toWantAdminView), pagination);
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getWantAdmin', summary: 'Get a want (admin view)' })
  @ApiOkEnvelope(WantAdminView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('appId') appId: string, @Param('id') id: string) {
    return ok(toWantAdminView(await this.wants.get(appId, id)));
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'updateWant', summary: 'Edit title, description or category' })
  @ApiOkEnvelope(WantAdminView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body(NothingToUpdatePipe) dto: UpdateWantDto,
  ) {
    return ok(toWantAdminView(await this.wants.update(appId, id, dto)));
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteWant', summary: 'Delete a want and its votes' })
  @ApiDoneEnvelope('Want deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('appId') appId: string, @Param('id') id: string) {
    await this.wants.remove(appId, id);
    return done('Want deleted');
  }

  @Patch(':id/status')
  @ApiOperation({ operationId: 'setWantStatus', summary: 'Change the status' })
  @ApiOkEnvelope(WantAdminView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async setStatus(@Param('appId') appId: string, @Param('id') id: string, @Body() dto: WantStatusDto) {
    return ok(toWantAdminView(await this.wants.setStatus(appId, id, dto.status)));
  }

  @Patch(':id/priority')
  @ApiOperation({ operationId: 'setWantPriority', summary: 'Change the priority' })
  @ApiOkEnvelope(WantAdminView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async setPriority(@Param('appId') appId: string, @Param('id') id: string, @Body() dto: WantPriorityDto) {
    return ok(toWantAdminView(await this.wants.setPriority(appId, id, dto.priority)));
  }
}
