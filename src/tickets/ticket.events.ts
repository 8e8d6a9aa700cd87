import type { TicketPriority, TicketTopic } from './schemas/ticket.schema';

/**
 * Domain events of the tickets group, emitted with `EventEmitter2` after the change is stored. The chat
 * notifications (channel `tickets`) subscribe to them with `@OnEvent(TicketEvents.Created)` etc.
 */
export const TicketEvents = {
  Created: 'ticket.created',
  CustomerMessage: 'ticket.customer_message',
} as const;

/** Length of the message excerpt an event carries (enough for a chat line, never the whole thread). */
export const EVENT_EXCERPT_LENGTH = 200;

export function excerpt(text: string, length = EVENT_EXCERPT_LENGTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}

/** `ticket.created`: a customer opened a ticket. */
export class TicketCreatedEvent {
  constructor(
    readonly appId: string,
    readonly ticketId: string,
    readonly subject: string,
    readonly email: string,
    readonly topic: TicketTopic,
    readonly priority: TicketPriority,
    /** The first characters of the ticket's message. */
    readonly excerpt: string,
    readonly shopId?: string,
  ) {}
}

/** `ticket.customer_message`: a message with `isCustomer: true` was added to a ticket's thread. */
export class TicketCustomerMessageEvent {
  constructor(
    readonly appId: string,
    readonly ticketId: string,
    readonly messageId: string,
    readonly subject: string,
    /** The ticket's customer e-mail. */
    readonly email: string,
    /** The first characters of the new message. */
    readonly excerpt: string,
    readonly authorEmail?: string,
    readonly authorName?: string,
  ) {}
}
