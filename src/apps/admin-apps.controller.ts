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
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { done, ok } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
} from '../common/swagger/envelope.decorators';
import { APP_CHANGED_CONCURRENTLY, AppsService } from './apps.service';
import { CreateAppDto, ListAppsQuery, UpdateAppDto } from './dto/app-input.dto';
import { AppPublicKeyView, AppView, toAppView } from './dto/app.dto';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { duplicateRecordMessage } from '../common/http/all-exceptions.filter';

@ApiTags('Apps')
@Controller('admin/apps')
@Authenticated(Access.Admin)
export class AdminAppsController {
  constructor(private readonly apps: AppsService) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listApps', summary: 'List app records (by name)' })
  @ApiOkEnvelope(AppView, { isArray: true })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListAppsQuery) {
    return ok((await this.apps.list(query)).map(toAppView));
  }

  @Post()
  @ApiOperation({
    operationId: 'createApp',
    summary: 'Create an app; the service generates its publishable key',
  })
  @ApiOkEnvelope(AppView, { status: HttpStatus.CREATED, message: 'App created' })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiErrorMessage(HttpStatus.CONFLICT, duplicateRecordMessage(['id']))
  async create(@Body() dto: CreateAppDto) {
    return ok(toAppView(await this.apps.create(dto)), 'App created');
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getApp', summary: 'Get an app record' })
  @ApiOkEnvelope(AppView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('id') id: string) {
    return ok(toAppView(await this.apps.requireApp(id)));
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateApp',
    summary: 'Update an app (its id is fixed; features, chatChannels and allowedOrigins are replaced)',
  })
  @ApiOkEnvelope(AppView, { message: 'App updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(@Param('id') id: string, @Body(NothingToUpdatePipe) dto: UpdateAppDto) {
    return ok(toAppView(await this.apps.update(id, dto)), 'App updated');
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteApp',
    summary: 'Delete an app and its API keys',
    description:
      'Its publishable key and API keys stop working at once; tenant data (tickets, contacts…) is kept.',
  })
  @ApiDoneEnvelope('App deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('id') id: string) {
    await this.apps.remove(id);
    return done('App deleted');
  }

  @Post(':id/rotate-key')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'rotateAppKey',
    summary: 'Replace the publishable key; the old one fails at once',
  })
  @ApiOkEnvelope(AppPublicKeyView, { message: 'Publishable key rotated' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async rotateKey(@Param('id') id: string) {
    return ok(await this.apps.rotateKey(id), 'Publishable key rotated');
  }

  @Post(':id/toggle')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ operationId: 'toggleApp', summary: 'Invert the active flag' })
  @ApiOkEnvelope(AppView, { message: 'App activated' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, APP_CHANGED_CONCURRENTLY)
  async toggle(@Param('id') id: string) {
    const app = await this.apps.toggle(id);
    return ok(toAppView(app), app.active ? 'App activated' : 'App deactivated');
  }
}
