import { Body, Controller, Delete, Get, HttpStatus, Param, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../common/auth/authenticated.decorator';
import { type AuthUser, CurrentUser } from '../../common/auth/current-user.decorator';
import { Access } from '../../common/auth/roles';
import { AcceptsBody, CONTENT_BODY_BYTES } from '../../common/http/body/body-policy';
import { done, ok } from '../../common/http/envelope';
import { ApiDoneEnvelope, ApiErrors, ApiOkEnvelope } from '../../common/swagger/envelope.decorators';
import { NothingToUpdatePipe } from '../../common/validation/nothing-to-update.pipe';
import {
  CreateNewsletterTemplateDto,
  NewsletterTemplateView,
  toNewsletterTemplateView,
  UpdateNewsletterTemplateDto,
} from './dto/newsletter-template.dto';
import { NewsletterTemplatesService } from './newsletter-templates.service';
import { ApiUnknownApp, KnownApp } from '../../apps/known-app.pipe';

/**
 * An app's newsletter templates (docs/architecture.md "Credentials and roles": GET for every role, writes for
 * `user` and `admin`).
 */
@ApiTags('Newsletter')
@Controller('admin/:appId/newsletter/templates')
@Authenticated(Access.Write)
export class NewsletterTemplatesController {
  constructor(private readonly templates: NewsletterTemplatesService) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listNewsletterTemplates',
    summary: "The app's newsletter templates, newest first",
  })
  @ApiOkEnvelope(NewsletterTemplateView, { isArray: true })
  @ApiUnknownApp()
  async list(@Param('appId', KnownApp) appId: string) {
    return ok((await this.templates.list(appId)).map(toNewsletterTemplateView));
  }

  @Post()
  @AcceptsBody({ maxBytes: CONTENT_BODY_BYTES })
  @ApiOperation({ operationId: 'createNewsletterTemplate', summary: 'Create a newsletter template (active)' })
  @ApiOkEnvelope(NewsletterTemplateView, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async create(
    @CurrentUser() user: AuthUser,
    @Param('appId') appId: string,
    @Body() dto: CreateNewsletterTemplateDto,
  ) {
    return ok(toNewsletterTemplateView(await this.templates.create(appId, dto, user.id)));
  }

  @Patch(':id')
  @AcceptsBody({ maxBytes: CONTENT_BODY_BYTES })
  @ApiOperation({ operationId: 'updateNewsletterTemplate', summary: 'Edit a newsletter template' })
  @ApiOkEnvelope(NewsletterTemplateView)
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(
    @Param('appId') appId: string,
    @Param('id') id: string,
    @Body(NothingToUpdatePipe) dto: UpdateNewsletterTemplateDto,
  ) {
    return ok(toNewsletterTemplateView(await this.templates.update(appId, id, dto)));
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteNewsletterTemplate',
    summary: 'Delete a newsletter template (campaigns already created from it keep their content)',
  })
  @ApiDoneEnvelope('Newsletter template deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('appId') appId: string, @Param('id') id: string) {
    await this.templates.remove(appId, id);
    return done('Newsletter template deleted');
  }
}
