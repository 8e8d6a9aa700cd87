import { bodyShapeProblem } from './body-shape';

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
};

describe('bodyShapeProblem', () => {
  it('accepts scalars, and objects within the limits', () => {
    expect(bodyShapeProblem('text', 10, 2)).toBeNull();
    expect(bodyShapeProblem({ a: 1, b: [1, 2], c: { d: null } }, 10, 3)).toBeNull();
    expect(bodyShapeProblem(nested(16), 100, 16)).toBeNull();
  });

  it('refuses more levels than allowed, without recursion (20,000 levels)', () => {
    expect(bodyShapeProblem(nested(17), 100, 16)).toBe('Request body is nested deeper than 16 levels');
    expect(bodyShapeProblem(nested(20_000), 1_000_000, 16)).toMatch(/nested deeper/);
  });

  it('counts properties and array items on every level together', () => {
    expect(bodyShapeProblem({ a: [1, 2, 3], b: { c: 1 } }, 6, 5)).toBeNull();
    expect(bodyShapeProblem({ a: [1, 2, 3], b: { c: 1, d: 2 } }, 6, 5)).toBe(
      'Request body has more than 6 fields',
    );
  });

  it('refuses an object of 95,000 keys', () => {
    const wide = Object.fromEntries(Array.from({ length: 95_000 }, (_, i) => [`k${i}`, i]));
    expect(bodyShapeProblem(wide, 1_000, 16)).toBe('Request body has more than 1000 fields');
  });
});
