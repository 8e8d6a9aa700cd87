import { dayOf } from './analytics-counters';

describe('dayOf', () => {
  it('is the UTC date of the instant, also when consecutive calls change day', () => {
    const instants = [
      '2026-11-24T00:00:00.000Z',
      '2026-11-24T23:59:59.999Z',
      '2026-11-25T00:00:00.000Z',
      '2026-11-24T12:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
    ];
    expect(instants.map((at) => dayOf(new Date(at)))).toEqual(instants.map((at) => at.slice(0, 10)));
  });
});
