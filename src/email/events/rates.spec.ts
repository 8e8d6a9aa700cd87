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
  it('waits for the minimum sample, then trips above the rate (0.1 % by default)', () => {
    const rule = { ratePercent: 0.1, minDelivered: 1_000 };
    expect(complaintsTooHigh(999, 500, rule)).toBe(false);
    expect(complaintsTooHigh(1_000, 1, rule)).toBe(false);
    expect(complaintsTooHigh(1_000, 2, rule)).toBe(true);
    expect(complaintsTooHigh(10_000, 10, rule)).toBe(false);
    expect(complaintsTooHigh(10_000, 11, rule)).toBe(true);
    // Gmail's 0.3 % ceiling, the old rule, as a setting.
    expect(complaintsTooHigh(1_000, 3, { ratePercent: 0.3, minDelivered: 1_000 })).toBe(false);
    expect(complaintsTooHigh(1_000, 4, { ratePercent: 0.3, minDelivered: 1_000 })).toBe(true);
  });
});
