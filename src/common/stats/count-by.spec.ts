import { countsByKey } from './count-by';

describe('countsByKey', () => {
  it('turns $group output into an object and skips missing keys', () => {
    expect(
      countsByKey([
        { _id: 'open', count: 3 },
        { _id: 'planned', count: 1 },
        { _id: null, count: 7 },
      ]),
    ).toEqual({ open: 3, planned: 1 });
  });

  it('gives an empty object for no groups', () => {
    expect(countsByKey([])).toEqual({});
  });
});
