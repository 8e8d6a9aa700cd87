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
  Put,
  Query,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { Access } from '../../common/auth/roles';
import { done, ok, page } from '../../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../../common/swagger/envelope.decorators';
import {
  CreateEmailTemplateDto,
  DuplicateEmailTemplateDto,
  EmailTemplateView,
  ListEmailTemplatesQuery,
  ReplaceEmailTemplateDto,
  TemplateCategoryView,
  TemplateScopeQuery,
  toEmailTemplateView,
  ToggleEmailTemplateDto,
  UpdateEmailTemplateDto,
} from './dto/email-template.dto';
import { DUPLICATE_TEMPLATE, EmailTemplatesService } from './email-templates.service';
import { AcceptsBody, MAX_BODY_BYTES } from '../../common/http/body/body-policy';
import { NothingToUpdatePipe } from '../../common/validation/nothing-to-update.pipe';

/**
 * Every route addresses one scope: `appId` (query, or body for toggle) names an app; omitted means the
 * global templates. A template of another scope is a 404. Every route answers 200 (spec).
 */
@ApiTags('E-mail templates')
@Controller('admin/templates')
@Authenticated(Access.Write)
export class EmailTemplatesController {
  constructor(private readonly templates: EmailTemplatesService) {}

  @Get('categories')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listTemplateCategories',
    summary: 'Languages of the scope’s templates with their counts',
  })
  @ApiOkEnvelope(TemplateCategoryView, { isArray: true })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async categories(@Query() query: TemplateScopeQuery) {
    return ok(await this.templates.categories(query.appId ?? null));
  }

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listTemplates',
    summary: 'List the scope’s templates, by name then language',
  })
  @ApiPageEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListEmailTemplatesQuery) {
    const { items, pagination } = await this.templates.list(query);
    return page(items.map(toEmailTemplateView), pagination);
  }

  @Post()
  @AcceptsBody({ maxBytes: MAX_BODY_BYTES })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'createTemplate',
    summary: 'Create a template (global when appId is null or omitted)',
  })
  @ApiOkEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, DUPLICATE_TEMPLATE)
  async create(@Body() dto: CreateEmailTemplateDto) {
    return ok(toEmailTemplateView(await this.templates.create(dto)));
  }

  @Get(':templateId')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getTemplate', summary: 'Get one template of the scope' })
  @ApiOkEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async get(@Param('templateId') id: string, @Query() query: TemplateScopeQuery) {
    return ok(toEmailTemplateView(await this.templates.get(id, query.appId ?? null)));
  }

  @Put(':templateId')
  @AcceptsBody({ maxBytes: MAX_BODY_BYTES })
  @ApiOperation({ operationId: 'replaceTemplate', summary: 'Replace a template (version + 1 unless sent)' })
  @ApiOkEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, DUPLICATE_TEMPLATE)
  async replace(
    @Param('templateId') id: string,
    @Query() query: TemplateScopeQuery,
    @Body() dto: ReplaceEmailTemplateDto,
  ) {
    return ok(toEmailTemplateView(await this.templates.replace(id, query.appId ?? null, dto)));
  }

  @Patch(':templateId')
  @AcceptsBody({ maxBytes: MAX_BODY_BYTES })
  @ApiOperation({
    operationId: 'updateTemplate',
    summary: 'Change the fields sent (version + 1 unless sent)',
  })
  @ApiOkEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, DUPLICATE_TEMPLATE)
  async update(
    @Param('templateId') id: string,
    @Query() query: TemplateScopeQuery,
    @Body(NothingToUpdatePipe) dto: UpdateEmailTemplateDto,
  ) {
    return ok(toEmailTemplateView(await this.templates.update(id, query.appId ?? null, dto)));
  }

  @Delete(':templateId')
  @ApiOperation({ operationId: 'deleteTemplate', summary: 'Delete a template of the scope' })
  @ApiDoneEnvelope('Template deleted')
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async remove(@Param('templateId') id: string, @Query() query: TemplateScopeQuery) {
    await this.templates.remove(id, query.appId ?? null);
    return done('Template deleted');
  }

  @Patch(':templateId/toggle')
  @ApiOperation({ operationId: 'toggleTemplate', summary: 'Set isActive (the scope is the body’s appId)' })
  @ApiOkEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async toggle(@Param('templateId') id: string, @Body() dto: ToggleEmailTemplateDto) {
    return ok(toEmailTemplateView(await this.templates.toggle(id, dto.appId ?? null, dto.isActive)));
  }

  @Post(':templateId/duplicate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'duplicateTemplate',
    summary: 'Copy a template into the scope named by the body’s appId (global when null)',
  })
  @ApiOkEnvelope(EmailTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, DUPLICATE_TEMPLATE)
  async duplicate(@Param('templateId') id: string, @Body() dto: DuplicateEmailTemplateDto) {
    return ok(toEmailTemplateView(await this.templates.duplicate(id, dto)));
  }
}
