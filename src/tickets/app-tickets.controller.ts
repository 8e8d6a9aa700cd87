import {
  Body,
  Controller,
  Delete,
  Get,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
  Res,
  StreamableFile,
} from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { done, ok, page } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
  ApiPageEnvelope,
} from '../common/swagger/envelope.decorators';
import {
  BulkDeleteTicketsDto,
  CreateTicketBody,
  type CreateTicketInput,
  CreateTicketMessageDto,
  ListAppTicketsQuery,
  TicketStatsQuery,
  TicketStatusDto,
  UpdateAppTicketDto,
} from './dto/ticket-input.dto';
import {
  BulkDeleteResultSchema,
  TicketMessageView,
  TicketStatsView,
  TicketView,
  toTicketMessageView,
  toTicketView,
} from './dto/ticket.dto';
import { contentDisposition } from './ticket-attachments.service';
import { TicketForm } from './ticket-form';
import { TicketStatsService } from './ticket-stats.service';
import { THREAD_FULL, TicketsService } from './tickets.service';
import { AcceptsBody } from '../common/http/body/body-policy';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { ApiUnknownApp, KnownApp } from '../apps/known-app.pipe';

/** The app-scoped family: every query is filtered by the `{appId}` of the path. */
@ApiTags('Tickets')
@Controller(':appId/tickets')
@Authenticated(Access.Write)
export class AppTicketsController {
  constructor(
    private readonly tickets: TicketsService,
    private readonly stats: TicketStatsService,
  ) {}

  @Get('stats')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'getTicketStats',
    summary: "Statistics of the app's tickets created in a range (default: last 30 days)",
  })
  @ApiOkEnvelope(TicketStatsView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async getStats(@Param('appId', KnownApp) appId: string, @Query() query: TicketStatsQuery) {
    return ok(await this.stats.stats(appId, query));
  }

  @Post()
  @AcceptsBody({ multipart: true })
  @ApiOperation({
    operationId: 'createTicket',
    summary: 'Open a ticket (JSON, or multipart/form-data with up to 5 files)',
    description:
      'Status starts `pending`, priority `normal` unless given, topic `general`. Uploaded files must be PNG, ' +
      'JPEG, GIF, WebP, PDF or plain text (400 otherwise or over 5 files) of at most 5 MiB each (413).',
  })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ type: CreateTicketBody })
  @ApiOkEnvelope(TicketView, { status: HttpStatus.CREATED, message: 'Ticket created' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.PAYLOAD_TOO_LARGE)
  async create(@Param('appId') appId: string, @TicketForm() input: CreateTicketInput) {
    return ok(toTicketView(await this.tickets.create(appId, input)), 'Ticket created');
  }

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listTickets',
    summary: "List the app's tickets (filters, search, sort, pagination)",
  })
  @ApiPageEnvelope(TicketView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async list(@Param('appId', KnownApp) appId: string, @Query() query: ListAppTicketsQuery) {
    const { items, pagination } = await this.tickets.list(appId, query);
    return page(items.map(toTicketView), pagination);
  }

  @Delete()
  @ApiOperation({ operationId: 'deleteTickets', summary: "Delete up to 100 of the app's tickets by id" })
  @ApiResponse({ status: HttpStatus.OK, description: 'Success', type: BulkDeleteResultSchema })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiUnknownApp()
  async removeMany(@Param('appId', KnownApp) appId: string, @Body() dto: BulkDeleteTicketsDto) {
    const deletedCount = await this.tickets.removeMany(appId, dto.ids);
    return { ...done(`${deletedCount} ticket(s) deleted`), deletedCount };
  }

  @Get(':messageId')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getTicket', summary: 'Get a ticket of the app' })
  @ApiOkEnvelope(TicketView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('appId') appId: string, @Param('messageId') id: string) {
    return ok(toTicketView(await this.tickets.get(appId, id)));
  }

  @Patch(':messageId')
  @ApiOperation({ operationId: 'updateTicket', summary: "Change a ticket's status, priority or topic" })
  @ApiOkEnvelope(TicketView, { message: 'Ticket updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(
    @Param('appId') appId: string,
    @Param('messageId') id: string,
    @Body(NothingToUpdatePipe) dto: UpdateAppTicketDto,
  ) {
    return ok(toTicketView(await this.tickets.update(appId, id, dto)), 'Ticket updated');
  }

  @Delete(':messageId')
  @ApiOperation({ operationId: 'deleteTicket', summary: 'Delete a ticket of the app and its uploaded files' })
  @ApiDoneEnvelope('Ticket deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('appId') appId: string, @Param('messageId') id: string) {
    await this.tickets.remove(appId, id);
    return done('Ticket deleted');
  }

  @Patch(':messageId/status')
  @ApiOperation({
    operationId: 'setTicketStatus',
    summary: "Change a ticket's status (any status may follow any)",
  })
  @ApiOkEnvelope(TicketView, { message: 'Ticket status updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async setStatus(
    @Param('appId') appId: string,
    @Param('messageId') id: string,
    @Body() dto: TicketStatusDto,
  ) {
    const ticket = await this.tickets.update(appId, id, { status: dto.status });
    return ok(toTicketView(ticket), 'Ticket status updated');
  }

  @Post(':messageId/messages')
  @ApiOperation({
    operationId: 'addTicketMessage',
    summary: "Add a message to a ticket's thread (at most 500 per ticket)",
  })
  @ApiOkEnvelope(TicketMessageView, { status: HttpStatus.CREATED, message: 'Message added' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.PAYLOAD_TOO_LARGE)
  @ApiErrorMessage(HttpStatus.CONFLICT, THREAD_FULL)
  async addMessage(
    @Param('appId') appId: string,
    @Param('messageId') id: string,
    @Body() dto: CreateTicketMessageDto,
  ) {
    return ok(toTicketMessageView(await this.tickets.addMessage(appId, id, dto)), 'Message added');
  }

  @Get(':messageId/messages')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listTicketMessages', summary: "A ticket's thread, oldest first" })
  @ApiOkEnvelope(TicketMessageView, { isArray: true })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async listMessages(@Param('appId') appId: string, @Param('messageId') id: string) {
    return ok((await this.tickets.listMessages(appId, id)).map(toTicketMessageView));
  }

  @Get(':messageId/attachments/:key')
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'downloadTicketAttachment',
    summary: 'Download a file uploaded with the ticket (always as an attachment)',
  })
  @ApiResponse({
    status: HttpStatus.OK,
    description: 'The file, with its stored content type',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiErrors(HttpStatus.NOT_FOUND)
  async download(
    @Param('appId') appId: string,
    @Param('messageId') id: string,
    @Param('key') key: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { file, filename, mimetype } = await this.tickets.openAttachment(appId, id, key);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Cache-Control', 'private, no-store');
    return new StreamableFile(file.body, {
      type: mimetype,
      length: file.size,
      disposition: contentDisposition(filename),
    });
  }
}
