import { isOriginPattern, originMatches } from './origin-match';

describe('originMatches', () => {
  it.each([
    ['https://shop.example.com', ['https://shop.example.com']],
    ['https://shop.example.com', ['https://shop.example.com/']],
    ['https://SHOP.example.com', ['https://shop.example.com']],
    ['http://localhost:5173', ['http://localhost:5173']],
    ['https://a.example.com', ['*.example.com']],
    ['http://a.b.example.com:8080', ['*.example.com']],
    ['https://a.example.com', ['https://*.example.com']],
    ['https://a.example.com:8443', ['https://*.example.com:8443']],
    ['https://anything.test', ['*']],
    ['https://b.test', ['https://a.test', 'https://b.test']],
  ])('allows %s for %p', (origin, patterns) => {
    expect(originMatches(origin, patterns)).toBe(true);
  });

  it.each([
    ['https://example.com', ['*.example.com']],
    ['https://evilexample.com', ['*.example.com']],
    ['https://example.com.evil.test', ['*.example.com']],
    ['http://a.example.com', ['https://*.example.com']],
    ['https://a.example.com', ['https://*.example.com:8443']],
    ['http://shop.example.com', ['https://shop.example.com']],
    ['https://shop.example.com:8443', ['https://shop.example.com']],
    ['https://shop.example.com', []],
    ['null', ['*']],
    ['not a url', ['*']],
    ['ftp://shop.example.com', ['*']],
    [undefined, ['*']],
    ['', ['*']],
  ])('refuses %p for %p', (origin, patterns) => {
    expect(originMatches(origin, patterns)).toBe(false);
  });
});

describe('isOriginPattern', () => {
  it.each([
    '*',
    '*.example.com',
    'https://*.example.com',
    'https://shop.example.com',
    'http://localhost:3000',
  ])('accepts %s', (pattern) => expect(isOriginPattern(pattern)).toBe(true));

  it.each([
    '',
    'example.com',
    '*.',
    '*example.com',
    'ftp://example.com',
    'https://*',
    'https://a.*.com',
    '**',
  ])('refuses %p', (pattern) => expect(isOriginPattern(pattern)).toBe(false));
});
