import { NotFoundException } from '@nestjs/common';
import { ListAppTicketsQuery } from './dto/ticket-input.dto';
import { parseTimeRange, ticketIdFilter, ticketListFilter, ticketListSort } from './ticket-query';

const query = (overrides: Partial<ListAppTicketsQuery>): ListAppTicketsQuery =>
  Object.assign(new ListAppTicketsQuery(), overrides);

describe('ticket list query', () => {
  it('makes a date-only endDate inclusive of that UTC day and a date-time one inclusive of the instant', () => {
    expect(parseTimeRange('2025-01-01', '2025-01-31')).toEqual({
      from: new Date('2025-01-01T00:00:00.000Z'),
      to: new Date('2025-02-01T00:00:00.000Z'),
    });
    expect(parseTimeRange(undefined, '2025-01-31T12:00:00Z').to).toEqual(
      new Date('2025-01-31T12:00:00.001Z'),
    );
  });

  it('refuses a startDate after the endDate', () => {
    expect(() => parseTimeRange('2025-02-01', '2025-01-31')).toThrow(/startDate must not be after endDate/);
  });

  it('builds equality filters, a createdAt range and an escaped search', () => {
    const filter = ticketListFilter(
      query({ status: 'pending', shopId: 's1', email: 'a@b.c', startDate: '2025-01-01', search: 'a.b(c' }),
      'app-1',
    );
    expect(filter).toMatchObject({ appId: 'app-1', status: 'pending', shopId: 's1', email: 'a@b.c' });
    // Trusted (so sanitizeFilter keeps the operator), open-ended because no endDate was given.
    expect(Object.keys(filter.createdAt as object)).toEqual(['$gte']);
    expect(filter.createdAt).toMatchObject({ $gte: new Date('2025-01-01T00:00:00.000Z') });
    const [subject] = filter.$or as { subject: RegExp }[];
    expect(subject.subject.source).toBe('a\\.b\\(c');
    expect(subject.subject.test('xx A.B(C yy')).toBe(true);
    expect(subject.subject.test('aXb(c')).toBe(false);
  });

  it('leaves appId out of the global filter when none is given', () => {
    expect(ticketListFilter(query({}))).toEqual({});
  });

  it('sorts priority and status by rank, ties on _id in the same direction', () => {
    expect(ticketListSort('priority', 'desc')).toEqual({ priorityRank: -1, _id: -1 });
    expect(ticketListSort('status', 'asc')).toEqual({ statusRank: 1, _id: 1 });
    expect(ticketListSort('createdAt', 'desc')).toEqual({ createdAt: -1, _id: -1 });
  });

  it('answers 404 for a malformed ticket id', () => {
    expect(() => ticketIdFilter('not-an-id')).toThrow(NotFoundException);
    expect(ticketIdFilter('65a1b2c3d4e5f6a7b8c9d0e1', 'app')).toEqual({
      _id: '65a1b2c3d4e5f6a7b8c9d0e1',
      appId: 'app',
    });
  });
});
