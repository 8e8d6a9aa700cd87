import { BadRequestException } from '@nestjs/common';
import { countsByKey, shapeStats, statsRange, toHours, utcDays, zeroFillDays } from './ticket-stats';

describe('ticket statistics', () => {
  describe('utcDays', () => {
    it('lists every UTC day the range touches, across a month end', () => {
      expect(utcDays(new Date('2025-01-30T10:00:00Z'), new Date('2025-02-02T00:00:00Z'))).toEqual([
        '2025-01-30',
        '2025-01-31',
        '2025-02-01',
      ]);
    });

    it('counts an end just after midnight as touching that day', () => {
      expect(utcDays(new Date('2025-03-01T00:00:00Z'), new Date('2025-03-02T00:00:00.001Z'))).toEqual([
        '2025-03-01',
        '2025-03-02',
      ]);
    });
  });

  describe('statsRange', () => {
    const now = new Date('2025-06-15T13:45:00Z');

    it('defaults to the last 30 UTC days ending today', () => {
      const range = statsRange(undefined, undefined, now);
      expect(range.from.toISOString()).toBe('2025-05-17T00:00:00.000Z');
      expect(range.to.toISOString()).toBe('2025-06-16T00:00:00.000Z');
      expect(range.days).toHaveLength(30);
      expect(range.days[0]).toBe('2025-05-17');
      expect(range.days[29]).toBe('2025-06-15');
    });

    it('includes the whole end day of a date-only endDate', () => {
      const range = statsRange('2025-01-01', '2025-01-03', now);
      expect(range.from.toISOString()).toBe('2025-01-01T00:00:00.000Z');
      expect(range.to.toISOString()).toBe('2025-01-04T00:00:00.000Z');
      expect(range.days).toEqual(['2025-01-01', '2025-01-02', '2025-01-03']);
    });

    it('takes 30 days from a lone startDate and 30 days up to a lone endDate', () => {
      expect(statsRange('2025-01-01', undefined, now).days).toHaveLength(30);
      const upTo = statsRange(undefined, '2025-01-30', now);
      expect(upTo.days[0]).toBe('2025-01-01');
      expect(upTo.days).toHaveLength(30);
    });

    it('accepts 366 days and refuses 367', () => {
      expect(statsRange('2024-01-01', '2024-12-31', now).days).toHaveLength(366);
      expect(() => statsRange('2024-01-01', '2025-01-01', now)).toThrow(BadRequestException);
    });

    it('refuses a start after the end', () => {
      expect(() => statsRange('2025-02-01', '2025-01-01', now)).toThrow(
        /startDate must not be after endDate/,
      );
    });
  });

  it('zero-fills the days without tickets, in order', () => {
    expect(
      zeroFillDays(
        ['2025-01-01', '2025-01-02', '2025-01-03'],
        [
          { _id: '2025-01-03', count: 4 },
          { _id: '2025-01-01', count: 1 },
        ],
      ),
    ).toEqual([
      { date: '2025-01-01', count: 1 },
      { date: '2025-01-02', count: 0 },
      { date: '2025-01-03', count: 4 },
    ]);
  });

  it('lists every known key with zero and keeps unexpected stored values', () => {
    expect(
      countsByKey(
        ['a', 'b'],
        [
          { _id: 'b', count: 2 },
          { _id: 'legacy', count: 1 },
          { _id: null, count: 5 },
        ],
      ),
    ).toEqual({ a: 0, b: 2, legacy: 1 });
  });

  it('turns milliseconds into hours with 2 decimals, 0 when nothing was resolved', () => {
    expect(toHours(5_400_000)).toBe(1.5);
    expect(toHours(1_000_000)).toBe(0.28);
    expect(toHours(null)).toBe(0);
    expect(toHours(undefined)).toBe(0);
  });

  it('shapes an empty facet into zeros', () => {
    const stats = shapeStats(
      { total: [], byStatus: [], byTopic: [], byPriority: [], recent: [], volume: [], resolution: [] },
      ['2025-01-01'],
    );
    expect(stats).toEqual({
      total: 0,
      byStatus: { pending: 0, in_progress: 0, resolved: 0, closed: 0 },
      byTopic: { general: 0, technical: 0, billing: 0, feature: 0 },
      byPriority: { low: 0, normal: 0, high: 0, urgent: 0 },
      recentActivity: [],
      volumeOverTime: [{ date: '2025-01-01', count: 0 }],
      averageResolutionTime: 0,
    });
  });
});
