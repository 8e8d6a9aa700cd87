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
import { ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { AuthUser, CurrentUser } from '../common/auth/current-user.decorator';
import { Access } from '../common/auth/roles';
import { done, ok, page } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../common/swagger/envelope.decorators';
import { ApiKeysService, FOREIGN_SECRET_ERROR } from './api-keys.service';
import {
  ApiKeyAppStats,
  ApiKeyStatsView,
  ApiKeyView,
  ApiKeyWithSecretView,
  RegeneratedApiKeyView,
  toApiKeyView,
  toApiKeyWithSecretView,
  toRegeneratedApiKeyView,
} from './dto/api-key.dto';
import {
  ApiKeyStatsQuery,
  CreateApiKeyDto,
  ListApiKeysQuery,
  UpdateApiKeyDto,
} from './dto/api-key-input.dto';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { ApiUnknownApp } from '../apps/known-app.pipe';

/** Admin-only, except the statistics and the list, which never carry a secret (viewers may read them). */
@ApiTags('API Keys')
@ApiExtraModels(ApiKeyAppStats)
@Controller('api-keys')
@Authenticated(Access.Admin)
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get('stats')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'getApiKeyStats',
    summary: 'Counts of keys: total, active, inactive (revoked), expired, and per app',
  })
  @ApiOkEnvelope(ApiKeyStatsView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async stats(@Query() query: ApiKeyStatsQuery) {
    return ok(await this.keys.stats(query.appId));
  }

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listApiKeys', summary: 'List keys (never with their secret value)' })
  @ApiPageEnvelope(ApiKeyView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListApiKeysQuery) {
    const { items, pagination } = await this.keys.list(query);
    return page(items.map(toApiKeyView), pagination);
  }

  @Post()
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Create a key for an existing app; the response carries the full value',
  })
  @ApiOkEnvelope(ApiKeyWithSecretView, {
    status: HttpStatus.CREATED,
    message: 'API key created; store it now, it is a secret',
  })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async create(@CurrentUser() caller: AuthUser, @Body() dto: CreateApiKeyDto) {
    const { key, value } = await this.keys.create(dto, caller.id);
    return ok(toApiKeyWithSecretView(key, value), 'API key created; store it now, it is a secret');
  }

  @Get(':keyId')
  @ApiOperation({ operationId: 'getApiKey', summary: 'Get a key with its full value (admins only)' })
  @ApiOkEnvelope(ApiKeyWithSecretView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(
    HttpStatus.CONFLICT,
    FOREIGN_SECRET_ERROR,
    'The stored value was encrypted under another `APP_SECRET`: regenerate the key to get a new value',
  )
  async get(@Param('keyId') keyId: string) {
    const { key, value } = await this.keys.getWithValue(keyId);
    return ok(toApiKeyWithSecretView(key, value));
  }

  @Patch(':keyId')
  @ApiOperation({
    operationId: 'updateApiKey',
    summary: 'Update name, description, allowed origins, active flag or expiry',
  })
  @ApiOkEnvelope(ApiKeyView, { message: 'API key updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(@Param('keyId') keyId: string, @Body(NothingToUpdatePipe) dto: UpdateApiKeyDto) {
    return ok(toApiKeyView(await this.keys.update(keyId, dto)), 'API key updated');
  }

  @Delete(':keyId')
  @ApiOperation({ operationId: 'deleteApiKey', summary: 'Delete a key permanently' })
  @ApiDoneEnvelope('API key deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('keyId') keyId: string) {
    await this.keys.remove(keyId);
    return done('API key deleted');
  }

  @Post(':keyId/revoke')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'revokeApiKey',
    summary: 'Deactivate a key (it is refused with 403 from now on)',
  })
  @ApiOkEnvelope(ApiKeyView, { message: 'API key revoked' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async revoke(@Param('keyId') keyId: string) {
    return ok(toApiKeyView(await this.keys.revoke(keyId)), 'API key revoked');
  }

  @Post(':keyId/regenerate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'regenerateApiKey',
    summary: 'Give the key a new value; the old value fails at once',
  })
  @ApiOkEnvelope(RegeneratedApiKeyView, { message: 'API key regenerated; store it now, it is a secret' })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async regenerate(@Param('keyId') keyId: string) {
    const { key, value } = await this.keys.regenerate(keyId);
    return ok(toRegeneratedApiKeyView(key, value), 'API key regenerated; store it now, it is a secret');
  }
}
