import { complaintsTooHigh } from './complaint-guard';
import { ratesOf } from './rates';

describe('ratesOf', () => {
  it('divides unique opens and clicks by delivered, bounces by sent', () => {
    expect(
      ratesOf({ sent: 10, delivered: 8, uniqueOpens: 4, uniqueClicks: 2, bounced: 2, complained: 1 }),
    ).toEqual({ openRate: 0.5, clickThroughRate: 0.25, bounceRate: 0.2, complaintRate: 0.125 });
  });

  it('falls back to sent while no delivery is reported, and gives 0 for nothing sent', () => {
    expect(
      ratesOf({ sent: 3, delivered: 0, uniqueOpens: 1, uniqueClicks: 0, bounced: 0, complained: 0 }),
    ).toMatchObject({ openRate: 0.3333 });
    expect(
      ratesOf({ sent: 0, delivered: 0, uniqueOpens: 0, uniqueClicks: 0, bounced: 0, complained: 0 }),
    ).toEqual({ openRate: 0, clickThroughRate: 0, bounceRate: 0, complaintRate: 0 });
  });
});

describe('complaintsTooHigh', () => {
  it('waits for 1,000 deliveries, then trips above 0.3%', () => {
    expect(complaintsTooHigh(999, 500)).toBe(false);
    expect(complaintsTooHigh(1_000, 3)).toBe(false);
    expect(complaintsTooHigh(1_000, 4)).toBe(true);
    expect(complaintsTooHigh(10_000, 31)).toBe(true);
  });
});
