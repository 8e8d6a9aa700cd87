import { redirectTarget } from './redirect-target';

describe('redirectTarget', () => {
  it.each([
    ['https://例え.jp/', 'https://xn--r8jz45g.jp/'],
    ['https://shop.test/€uro', 'https://shop.test/%E2%82%ACuro'],
    ['https://shop.test/a b?q=x y#f g', 'https://shop.test/a%20b?q=x%20y#f%20g'],
    ['https://shop.test/café?q=é', 'https://shop.test/caf%C3%A9?q=%C3%A9'],
    ['https://shop.test/new\nline\r\t', 'https://shop.test/newline'],
    ['HTTP://Shop.TEST:80/a/../b', 'http://shop.test/b'],
    ['https://shop.test', 'https://shop.test/'],
    ['https://shop.test/a"b<c>', 'https://shop.test/a%22b%3Cc%3E'],
  ])('writes %j as %j', (link, stored) => {
    expect(redirectTarget(link)).toBe(stored);
  });

  it.each([
    'https://exa mple.test/',
    'https://',
    '/relative/path',
    'javascript:alert(1)',
    'ftp://files.test/x',
    'mailto:a@b.test',
  ])('refuses %j', (link) => {
    expect(redirectTarget(link)).toBeNull();
  });
});
