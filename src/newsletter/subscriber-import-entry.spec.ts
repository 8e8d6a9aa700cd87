import { emailAddressMessage } from '../common/validation/email-address';
import { checkImportEntry } from './subscriber-import-entry';

describe('checkImportEntry', () => {
  it('keeps a valid entry, lower-cased and trimmed', () => {
    expect(checkImportEntry({ email: ' Ada@Example.COM ', firstName: ' Ada ', locale: 'fr' })).toEqual({
      email: 'ada@example.com',
      firstName: 'Ada',
      locale: 'fr',
    });
    expect(checkImportEntry({ email: 'b@example.com', firstName: '   ' })).toEqual({
      email: 'b@example.com',
    });
  });

  it.each([
    [null, 'an entry must be an object'],
    [['a@example.com'], 'an entry must be an object'],
    ['a@example.com', 'an entry must be an object'],
    [{}, 'email must be a string'],
    [{ email: 42 }, 'email must be a string'],
    [{ email: 'a@b' }, emailAddressMessage('email')],
    [{ email: `${'a'.repeat(250)}@example.com` }, emailAddressMessage('email')],
    [{ email: 'x@erased.invalid' }, 'email: addresses under .invalid cannot receive mail'],
    [{ email: 'a@example.com', firstName: 1 }, 'firstName must be a string'],
    [{ email: 'a@example.com', firstName: 'x'.repeat(101) }, 'firstName must be at most 100 characters'],
    [{ email: 'a@example.com', locale: 'xx' }, 'locale must be one of en, es, fr, de, it, pt'],
    [{ email: 'a@example.com', tags: [] }, 'property tags should not exist'],
  ])('refuses %j: %s', (entry, error) => {
    expect(checkImportEntry(entry)).toEqual({ error });
  });

  // Their time is measured by `npm run bench -- input-scans`, not bounded here.
  it('checks 10,000 entries', () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => ({
      email: `reader-${i}@example.com`,
      locale: 'en',
    }));
    expect(entries.map(checkImportEntry).every((entry) => !('error' in entry))).toBe(true);
  });
});
