import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { EMAIL_ADDRESS_MAX, IsEmailAddress, isSendableAddress, LOCAL_PART_MAX } from './email-address';

describe('isSendableAddress', () => {
  it.each([
    'ada@example.com',
    'Ada.Lovelace@Example.COM',
    'ada+newsletter@example.com',
    'ada.b.c+tag-1@mail.eu.example.co.uk',
    '007@example.com',
    'a@b.cd',
    'user@x-1.example.io',
    'user@123.example.com',
    'user@xn--r8jz45g.jp',
    "o'brien@example.ie",
    "!#$%&'*+/=?^_`{|}~-@example.org",
    `${'a'.repeat(LOCAL_PART_MAX)}@example.com`,
    `a@${'b'.repeat(63)}.test`,
  ])('accepts %p', (address) => expect(isSendableAddress(address)).toBe(true));

  const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(56)}.test`;

  it('accepts an address of exactly 254 characters and refuses one of 255', () => {
    expect(longest).toHaveLength(EMAIL_ADDRESS_MAX);
    expect(isSendableAddress(longest)).toBe(true);
    expect(isSendableAddress(longest.replace('@', 'a@'))).toBe(false);
    expect(isSendableAddress(longest.replace('.test', '.tests'))).toBe(false);
  });

  it.each([
    ['a quoted local part', '"a b"@example.com'],
    ['a quoted local part with CRLF', '"a\r\nb"@example.com'],
    ['a header injection', 'a@example.com\r\nBcc: x@example.com'],
    ['a space', 'a b@example.com'],
    ['a tab', 'a\tb@example.com'],
    ['a control character', 'a\u0001b@example.com'],
    ['DEL', 'a\u007fb@example.com'],
    ['a NUL', 'a\u0000@example.com'],
    ['two dots in a row', 'a..b@x.test'],
    ['a leading dot', '.a@x.test'],
    ['a trailing dot in the local part', 'a.@x.test'],
    ['no local part', '@x.test'],
    ['no domain', 'a@'],
    ['no @', 'a.example.com'],
    ['two @', 'a@b@x.test'],
    ['a domain without a dot', 'a@localhost'],
    ['a domain with a trailing dot', 'a@x.test.'],
    ['an empty label', 'a@x..test'],
    ['a label starting with a hyphen', 'a@-x.test'],
    ['a label ending with a hyphen', 'a@x-.test'],
    ['a 64-character label', `a@${'b'.repeat(64)}.test`],
    ['a numeric top-level label', 'a@1.2.3.4'],
    ['an IP literal', 'a@[127.0.0.1]'],
    ['an underscore in the domain', 'a@x_y.test'],
    ['a 65-character local part', `${'a'.repeat(LOCAL_PART_MAX + 1)}@example.com`],
    ['a display name', 'Ada <ada@example.com>'],
    ['a comma (two recipients)', 'a@x.test,b@x.test'],
    ['a comment', 'a(comment)@x.test'],
    ['a backslash', 'a\\b@x.test'],
    ['non-ASCII in the local part', 'josé@example.com'],
    ['non-ASCII in the domain', 'a@例え.jp'],
    ['a fullwidth @', 'a＠example.com'],
    ['leading whitespace', ' a@example.com'],
    ['an empty string', ''],
  ])('refuses %s', (_kind, address) => expect(isSendableAddress(address)).toBe(false));

  it.each([null, undefined, 42, ['a@x.test'], { toString: () => 'a@x.test' }])('refuses %p', (value) =>
    expect(isSendableAddress(value)).toBe(false),
  );

  // Its time on such input is measured by `npm run bench -- input-scans`, not bounded here.
  it('refuses a huge input', () => {
    expect(isSendableAddress(`${'a.'.repeat(50_000)}@example.com`)).toBe(false);
    expect(isSendableAddress(`a@${'b-'.repeat(100)}`)).toBe(false);
  });
});

describe('@IsEmailAddress', () => {
  class Body {
    @IsEmailAddress() email: unknown;
  }
  const errors = (email: unknown) =>
    validateSync(plainToInstance(Body, { email })).flatMap((error) => Object.values(error.constraints ?? {}));

  it('passes an ordinary address', () => expect(errors('ada+x@example.com')).toEqual([]));

  it('names the field and says what is wrong', () => {
    expect(errors('"a b"@example.com')).toEqual([expect.stringMatching(/^email must be an email address/)]);
    expect(errors(12)).toEqual(expect.arrayContaining(['email must be a string']));
    expect(errors(`${'a'.repeat(250)}@x.test`)).toEqual(
      expect.arrayContaining([`email must be shorter than or equal to ${EMAIL_ADDRESS_MAX} characters`]),
    );
  });
});
