import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import {
  PRIORITY_RANK,
  STATUS_RANK,
  Ticket,
  type TicketPriority,
  type TicketStatus,
} from '../../src/tickets/schemas/ticket.schema';
import type { TestApp } from './app';

export type TicketSeed = Partial<Omit<Ticket, '_id'>> & { appId: string };

export const ticketModel = (t: TestApp) => t.app.get<Model<Ticket>>(getModelToken(Ticket.name));

/**
 * Inserts tickets directly (own createdAt/updatedAt kept), with ranks consistent with status and priority.
 */
export async function seedTickets(t: TestApp, seeds: TicketSeed[]): Promise<Ticket[]> {
  const now = new Date();
  const docs = seeds.map((seed, index) => {
    const status: TicketStatus = seed.status ?? 'pending';
    const priority: TicketPriority = seed.priority ?? 'normal';
    return {
      email: `customer${index}@example.com`,
      subject: `Subject ${index}`,
      message: `Message ${index}`,
      topic: 'general',
      createdAt: now,
      updatedAt: seed.createdAt ?? now,
      ...seed,
      status,
      priority,
      statusRank: STATUS_RANK[status],
      priorityRank: PRIORITY_RANK[priority],
    };
  });
  const inserted = await ticketModel(t).insertMany(docs, { timestamps: false });
  return inserted.map((doc) => doc.toObject() as Ticket);
}
