import { FetchBudget } from './fetch-budget';

describe('FetchBudget', () => {
  let now = 1_000_000;
  const budget = () => new FetchBudget({ perClient: 2, total: 3, windowMs: 60_000 }, () => now);

  it('grants a client its share, then answers the seconds left in the window', () => {
    const fetches = budget();
    expect(fetches.take('10.0.0.1')).toBeNull();
    expect(fetches.take('10.0.0.1')).toBeNull();
    now += 15_000;
    expect(fetches.take('10.0.0.1')).toBe(45);
  });

  it('stops everyone once the total is used, and starts again with the next window', () => {
    const fetches = budget();
    expect(['a', 'b', 'c', 'd'].map((client) => fetches.take(client))).toEqual([null, null, null, 60]);
    now += 60_000;
    expect(fetches.take('d')).toBeNull();
  });
});
