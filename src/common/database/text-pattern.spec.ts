import { BSON } from 'mongodb';
import { containsText, literalSource } from './text-pattern';

describe('text patterns for database queries', () => {
  it('match the text literally, in any case', () => {
    expect(containsText('a.b*(c)').test('xxA.B*(C)yy')).toBe(true);
    expect(containsText('a.b').test('axb')).toBe(false);
  });

  it('carry a NUL byte in a form BSON can serialise, still matching it', () => {
    const pattern = containsText('a\0b');
    expect(literalSource('a\0b')).toBe('a\\x00b');
    expect(pattern.test('xa\0by')).toBe(true);
    expect(() => BSON.serialize({ filter: { $regex: pattern } })).not.toThrow();
    expect(() => BSON.serialize({ filter: { $regex: new RegExp('a\0b') } })).toThrow(/null bytes/);
  });
});
