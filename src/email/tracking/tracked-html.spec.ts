import { joinWithLinks, splitAtLinks, withOpenPixel } from './tracked-html';

describe('tracked HTML', () => {
  it('finds literal http(s) links of anchors in order, leaving mailto, anchors and Handlebars links alone', () => {
    const html =
      '<a href="https://a.test/x?y=1&amp;z=2">A</a> <a class="b" href=\'http://b.test\'>B</a>' +
      '<a href="mailto:x@y.test">M</a><a href="#top">T</a><a href="{{unsubscribeUrl}}">U</a>' +
      '<a href="https://c.test/?e={{email}}">C</a><img src="https://img.test/i.png">';
    const split = splitAtLinks(html);
    expect(split.links).toEqual(['https://a.test/x?y=1&z=2', 'http://b.test/']);
    expect(joinWithLinks(split, ['L0', 'L1'])).toBe(
      html.replace('https://a.test/x?y=1&amp;z=2', 'L0').replace('http://b.test', 'L1'),
    );
  });

  it('stores links normalised and leaves those that cannot be untracked', () => {
    const html =
      '<a href="https://例え.jp/">A</a><a href="https://exa mple.test/">B</a>' +
      '<a href="https://shop.test/café\nx">C</a>';
    const split = splitAtLinks(html);
    expect(split.links).toEqual(['https://xn--r8jz45g.jp/', 'https://shop.test/caf%C3%A9x']);
    expect(joinWithLinks(split, ['L0', 'L1'])).toBe(
      '<a href="L0">A</a><a href="https://exa mple.test/">B</a><a href="L1">C</a>',
    );
  });

  it('gives back the HTML unchanged without links', () => {
    const split = splitAtLinks('<p>No links</p>');
    expect(split.links).toEqual([]);
    expect(joinWithLinks(split, [])).toBe('<p>No links</p>');
  });

  it('puts the pixel before </body>, or at the end of a fragment', () => {
    expect(withOpenPixel('<html><body><p>x</p></BODY></html>', 'P')).toMatch(
      /<p>x<\/p><img src="P"[^>]*><\/BODY>/,
    );
    expect(withOpenPixel('<p>x</p>', 'P')).toMatch(/^<p>x<\/p><img src="P"/);
  });
});
