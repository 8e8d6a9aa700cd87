import { defaultMagicLinkContent, magicLinkPage, magicLinkUrl } from './magic-link-mail';

const BASE = 'https://api.example.com';
const TOKEN = 'kq3Z6d0x1mS8v2b7yQ5wN4tE9rU0iO3pA6sD8fG1hJ2';

describe('magicLinkPage', () => {
  it("takes the app's features.magicLinkUrl first", () => {
    const app = {
      name: 'Shop',
      features: { magicLinkUrl: 'https://shop.example.com/sign-in' },
      allowedOrigins: ['https://other.example.com'],
    };
    expect(magicLinkPage(app, BASE).href).toBe('https://shop.example.com/sign-in');
  });

  it.each([['javascript:alert(1)'], ['ftp://shop.example.com/x'], ['not a url'], [42], [true]])(
    'ignores a magicLinkUrl that is not an http(s) URL (%p)',
    (magicLinkUrl) => {
      const app = { name: 'Shop', features: { magicLinkUrl }, allowedOrigins: [] };
      expect(magicLinkPage(app, BASE).href).toBe(`${BASE}/`);
    },
  );

  it('then the first exact allowedOrigins entry, skipping wildcards', () => {
    const app = {
      name: 'Shop',
      features: {},
      allowedOrigins: ['*', '*.example.com', 'https://*.example.com', 'https://front.example.com/'],
    };
    expect(magicLinkPage(app, BASE).href).toBe('https://front.example.com/');
  });

  it('then PUBLIC_BASE_URL', () => {
    expect(magicLinkPage({ name: 'Shop', features: {}, allowedOrigins: ['*'] }, BASE).href).toBe(`${BASE}/`);
    expect(magicLinkPage({ name: 'Shop' }, 'http://localhost:3000').href).toBe('http://localhost:3000/');
  });
});

describe('magicLinkUrl', () => {
  it('adds ?token= to a page without a query and &token= to one with a query', () => {
    expect(magicLinkUrl(new URL('https://shop.example.com/sign-in'), TOKEN)).toBe(
      `https://shop.example.com/sign-in?token=${TOKEN}`,
    );
    expect(magicLinkUrl(new URL('https://shop.example.com/sign-in?from=mail#top'), TOKEN)).toBe(
      `https://shop.example.com/sign-in?from=mail&token=${TOKEN}#top`,
    );
  });

  it('replaces a token already in the configured URL instead of adding a second one', () => {
    const url = new URL(magicLinkUrl(new URL('https://shop.example.com/?token=old'), TOKEN));
    expect(url.searchParams.getAll('token')).toEqual([TOKEN]);
  });
});

describe('defaultMagicLinkContent', () => {
  const variables = {
    link: `https://shop.example.com/sign-in?a=1&token=${TOKEN}`,
    appName: 'Tom & <b>Jerry</b>\r\nBcc: x@evil.test',
    email: 'ada@example.com',
    expiresInMinutes: 15,
  };

  it('carries the link in the text and the HTML, with every value escaped in the HTML', () => {
    const { text, html } = defaultMagicLinkContent(variables);
    expect(text).toContain(variables.link);
    expect(html).toContain(`href="https://shop.example.com/sign-in?a=1&amp;token=${TOKEN}"`);
    expect(html).toContain('Tom &amp; &lt;b&gt;Jerry&lt;/b&gt;');
    expect(html).not.toContain('<b>');
    expect(text).toContain('15 minutes');
  });

  it('keeps the subject on one line', () => {
    expect(defaultMagicLinkContent(variables).subject).toBe(
      'Your sign-in link for Tom & <b>Jerry</b> Bcc: x@evil.test',
    );
  });
});
