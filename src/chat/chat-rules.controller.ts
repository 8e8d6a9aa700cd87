import { Body, Controller, Delete, Get, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
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
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { ChatRulesService, duplicateRuleMessage } from './chat-rules.service';
import {
  ChatRuleView,
  CreateChatRuleDto,
  ListChatRulesQuery,
  toChatRuleView,
  UpdateChatRuleDto,
} from './dto/chat-rule.dto';
import { ApiUnknownApp } from '../apps/known-app.pipe';

@ApiTags('Chat routing')
@Controller('admin/chat-routing')
@Authenticated(Access.Admin)
export class ChatRulesController {
  constructor(private readonly rules: ChatRulesService) {}

  @Get()
  @ApiOperation({ operationId: 'listChatRoutingRules', summary: 'The chat routing rules of an app' })
  @ApiOkEnvelope(ChatRuleView, { isArray: true })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListChatRulesQuery) {
    return ok((await this.rules.list(query.appId)).map(toChatRuleView));
  }

  @Post()
  @ApiOperation({
    operationId: 'createChatRoutingRule',
    summary: 'Route one channel of an app to a webhook',
    description: 'One rule per app and channel (a second one is a 409). The rule starts active.',
  })
  @ApiOkEnvelope(ChatRuleView, { status: HttpStatus.CREATED, message: 'Chat routing rule created' })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiErrorMessage(HttpStatus.CONFLICT, duplicateRuleMessage('my-shop', 'tickets'))
  @ApiUnknownApp()
  async create(@Body() dto: CreateChatRuleDto) {
    return ok(toChatRuleView(await this.rules.create(dto)), 'Chat routing rule created');
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateChatRoutingRule',
    summary: 'Change the webhook of a rule, or switch it off and on',
  })
  @ApiOkEnvelope(ChatRuleView, { message: 'Chat routing rule updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(@Param('id') id: string, @Body(NothingToUpdatePipe) dto: UpdateChatRuleDto) {
    return ok(toChatRuleView(await this.rules.update(id, dto)), 'Chat routing rule updated');
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteChatRoutingRule',
    summary: 'Delete a rule: the app falls back to the global default for that channel',
  })
  @ApiDoneEnvelope('Chat routing rule deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('id') id: string) {
    await this.rules.remove(id);
    return done('Chat routing rule deleted');
  }
}
