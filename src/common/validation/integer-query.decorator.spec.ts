import { parseIntegerQuery } from './integer-query.decorator';

describe('parseIntegerQuery', () => {
  it.each([
    ['1', 1],
    ['0', 0],
    ['10000', 10_000],
    ['999999999', 999_999_999],
  ])('reads %p as %p', (text, value) => expect(parseIntegerQuery(text)).toBe(value));

  it.each(['0x10', '1e3', '1.0', '-1', ' 7', '7 ', '', '010', '1000000000', 'abc'])(
    'passes %p on unchanged for the validator to refuse',
    (text) => expect(parseIntegerQuery(text)).toBe(text),
  );

  it('passes a repeated parameter (an array) on unchanged', () => {
    expect(parseIntegerQuery(['1', '2'])).toEqual(['1', '2']);
  });
});
