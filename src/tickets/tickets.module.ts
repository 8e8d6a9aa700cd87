import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppsModule } from '../apps/apps.module';
import { StorageModule } from '../common/storage/storage.module';
import { AppTicketsController } from './app-tickets.controller';
import { Ticket, TicketSchema } from './schemas/ticket.schema';
import { TicketAttachmentsService } from './ticket-attachments.service';
import { TicketErasureListener } from './ticket-erasure.listener';
import { TicketStatsService } from './ticket-stats.service';
import { TicketsController } from './tickets.controller';
import { TicketsService } from './tickets.service';

@Module({
  imports: [
    MongooseModule.forFeature([{ name: Ticket.name, schema: TicketSchema }]),
    AppsModule,
    StorageModule,
  ],
  controllers: [TicketsController, AppTicketsController],
  providers: [TicketsService, TicketStatsService, TicketAttachmentsService, TicketErasureListener],
  exports: [TicketsService],
})
export class TicketsModule {}
