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
import { ListTicketsQuery, TicketStatusDto, UpdateTicketDto } from './dto/ticket-input.dto';
import { toTicketView, TicketView } from './dto/ticket.dto';
import { ALL_APPS, TicketsService } from './tickets.service';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';

/** The global family: tickets of every app, for the back office. */
@ApiTags('Tickets')
@Controller('tickets')
@Authenticated(Access.Write)
export class TicketsController {
  constructor(private readonly tickets: TicketsService) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({
    operationId: 'listAllTickets',
    summary: 'List tickets of every app (filters, search, sort, pagination)',
  })
  @ApiPageEnvelope(TicketView)
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListTicketsQuery) {
    const { items, pagination } = await this.tickets.list(query.appId ?? ALL_APPS, query);
    return page(items.map(toTicketView), pagination);
  }

  @Get(':messageId')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getAnyTicket', summary: 'Get a ticket' })
  @ApiOkEnvelope(TicketView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('messageId') id: string) {
    return ok(toTicketView(await this.tickets.get(ALL_APPS, id)));
  }

  @Patch(':messageId')
  @ApiOperation({ operationId: 'updateAnyTicket', summary: "Change a ticket's status or priority" })
  @ApiOkEnvelope(TicketView, { message: 'Ticket updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async update(@Param('messageId') id: string, @Body(NothingToUpdatePipe) dto: UpdateTicketDto) {
    return ok(toTicketView(await this.tickets.update(ALL_APPS, id, dto)), 'Ticket updated');
  }

  @Delete(':messageId')
  @ApiOperation({ operationId: 'deleteAnyTicket', summary: 'Delete a ticket and its uploaded files' })
  @ApiDoneEnvelope('Ticket deleted')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async remove(@Param('messageId') id: string) {
    await this.tickets.remove(ALL_APPS, id);
    return done('Ticket deleted');
  }

  @Patch(':messageId/status')
  @ApiOperation({
    operationId: 'setAnyTicketStatus',
    summary: "Change a ticket's status (any status may follow any)",
  })
  @ApiOkEnvelope(TicketView, { message: 'Ticket status updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  async setStatus(@Param('messageId') id: string, @Body() dto: TicketStatusDto) {
    return ok(
      toTicketView(await this.tickets.update(ALL_APPS, id, { status: dto.status })),
      'Ticket status updated',
    );
  }
}
